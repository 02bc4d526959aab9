import Foundation
import Testing
import CacheTestSupport

/// A partial entry to start from: `/cut`, a 3,000,000-byte body with the strong ETag "v1", whose first `get` is
/// cut half-way, leaving its verified bytes in the cache of `cli`; afterwards the origin serves it whole.
enum KeptPartialSetup {
    static let size = 3_000_000

    /// The names in the cache's `tmp/` (partial bodies, and anything left behind).
    static func tmpFiles(_ cli: CLIHarness) throws -> [String] {
        let tmp = cli.directory.appendingPathComponent("default/tmp")
        guard FileManager.default.fileExists(atPath: tmp.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: tmp.path)
    }

    /// Runs the cut `get` (expected to fail and keep one partial); returns the output path (removed) and the
    /// cut run's standard error.
    static func make(_ origin: OriginServer, _ cli: CLIHarness) async throws -> (output: URL, cutError: String) {
        try await origin.configure(path: "/cut", headers: [("Cache-Control", "max-age=600")], size: size,
                                   etag: "\"v1\"", truncate: true)
        let output = cli.directory.appendingPathComponent("cut.bin")
        let cut = await cli.run(["get", "-o", output.path, origin.url("/cut").absoluteString])
        #expect(cut.code != 0)
        #expect(try tmpFiles(cli).count == 1, "the cut transfer keeps a partial")
        try? FileManager.default.removeItem(at: output)
        try await origin.configure(path: "/cut", headers: [("Cache-Control", "max-age=600")], size: size,
                                   etag: "\"v1\"")
        return (output, cut.err)
    }
}
