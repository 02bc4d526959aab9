import Foundation
import Testing
import CacheCLI

/// Runs `dlcache` in process against a temp cache directory and captures its output.
struct CLIHarness {
    /// The result of one run.
    struct Run {
        var code: Int32
        var out: String
        var err: String
        /// stdout parsed as JSON.
        func json() throws -> Any { try JSONSerialization.jsonObject(with: Data(out.utf8)) }
        /// stdout parsed as one JSON object.
        func object() throws -> [String: Any] { try #require(try json() as? [String: Any]) }
    }

    let directory: URL
    /// The clock of every run (progress and the cache's freshness); real time unless given.
    let now: @Sendable () -> Date

    init(now: @escaping @Sendable () -> Date = { Date() }) throws {
        self.now = now
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: directory) }

    /// Runs `dlcache <args>` with DLCACHE_DIR pointing at the temp directory (plus `variables`).
    func run(_ args: [String], stdin: String = "", terminal: Bool = false, variables: [String: String] = [:]) async -> Run {
        let capture = CapturedConsole(stdin: stdin, terminal: terminal)
        let environment = CommandEnvironment(console: capture.console,
                                             variables: ["DLCACHE_DIR": directory.path, "HOME": "/nonexistent"]
                                                 .merging(variables) { $1 },
                                             currentDirectory: directory, now: now)
        let code = await CommandLineTool.run(arguments: ["dlcache"] + args, environment: environment)
        return Run(code: code, out: capture.stdout, err: capture.stderr)
    }
}
