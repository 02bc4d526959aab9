// Placeholder until the ModelCache suite is written (see its issue).
enum ModelCacheSuite {
    static func run() async throws -> [BenchResult] {
        throw BenchError(description: "the ModelCache suite is not built yet")
    }
}
