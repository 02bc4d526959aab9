// Placeholder until the Client suite is written (see its issue).
enum ClientSuite {
    static func run() async throws -> [BenchResult] {
        throw BenchError(description: "the Client suite is not built yet")
    }
}
