import Foundation
import Testing
import CacheCLI
import CacheTestSupport

/// `dlcache get` streams: the body goes to stdout or `-o FILE` as it arrives; a transfer cut mid-way leaves the
/// bytes received in FILE and exits non-zero (like curl); a byte progress bar is drawn on stderr only when stderr
/// is a terminal and the body is over a few MB.
@Suite struct GetWritesBodyAsItArrivesTests {
    static let size = 6_000_000

    static func generated(_ count: Int) -> Data { Data((0..<count).map { UInt8($0 % 256) }) }

    @Test func aCutTransferLeavesThePartialBytesInTheOutputFileAndFails() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/cut", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                   etag: "\"v1\"", truncate: true)
        let output = cli.directory.appendingPathComponent("out.bin")
        let run = await cli.run(["get", origin.url("/cut").absoluteString, "-o", output.path])
        #expect(run.code != 0)
        #expect(try Data(contentsOf: output) == Self.generated(Self.size / 2))  // origin.py cuts after half
        #expect(run.err.contains("bytes written to the output"))
        // Nothing complete was stored: a cache-only read finds nothing to serve.
        let cached = await cli.run(["get", origin.url("/cut").absoluteString, "--policy", "return-cache-dont-load",
                                    "-o", cli.directory.appendingPathComponent("again.bin").path])
        #expect(cached.code != 0)
    }

    /// The same cut with the body on stdout says how many bytes went there.
    @Test func aCutTransferToStandardOutputSaysHowManyBytesWentThere() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/cut", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                   etag: "\"v1\"", truncate: true)
        let run = await cli.run(["get", "-o", "-", origin.url("/cut").absoluteString])
        #expect(run.code == 18)
        #expect(run.err.hasSuffix(" (\(Self.size / 2) bytes written to standard output)\n"), "\(run.err)")
    }

    @Test func aPipeGetsTheBodyWithNoProgressBar() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let body = String(repeating: "streamed body line\n", count: 300_000)  // 5.7 MB
        try await origin.configure(path: "/text", headers: [("Cache-Control", "max-age=600")], body: body)
        let run = await cli.run(["get", origin.url("/text").absoluteString])
        #expect(run.code == 0)
        #expect(run.out == body)
        #expect(run.err.isEmpty)
        let hit = await cli.run(["get", origin.url("/text").absoluteString])
        #expect(hit.code == 0 && hit.out == body && hit.err.isEmpty)
        #expect(try await origin.hits("/text").total == 1)
    }

    @Test func aTerminalShowsAByteProgressBarForALargeBodyOnly() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/large", headers: [("Cache-Control", "max-age=600")], size: Self.size)
        try await origin.configure(path: "/small", headers: [("Cache-Control", "max-age=600")], body: "small")
        let output = cli.directory.appendingPathComponent("large.bin")
        let large = await cli.run(["get", origin.url("/large").absoluteString, "-o", output.path], terminal: true)
        #expect(large.code == 0)
        #expect(try Data(contentsOf: output) == Self.generated(Self.size))
        #expect(large.err.contains("\r[") && large.err.contains("#"))
        // A hit of the same body is copied from the cache with the bar too.
        try FileManager.default.removeItem(at: output)
        let hit = await cli.run(["get", origin.url("/large").absoluteString, "-o", output.path], terminal: true)
        #expect(hit.code == 0)
        #expect(try await origin.hits("/large").total == 1, "the second get is a hit")
        #expect(try Data(contentsOf: output) == Self.generated(Self.size))
        #expect(hit.err.contains("\r[") && hit.err.contains("#"), "hit's stderr: \(hit.err.debugDescription)")
        let small = await cli.run(["get", origin.url("/small").absoluteString], terminal: true)
        #expect(small.code == 0 && small.out == "small")
        #expect(!small.err.contains("["))
    }
}
