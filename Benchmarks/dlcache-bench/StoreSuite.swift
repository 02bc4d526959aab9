// Placeholder until the Store suite is written (see its issue).
enum StoreSuite {
    static func run() async throws -> [BenchResult] {
        throw BenchError(description: "the Store suite is not built yet")
    }
}
