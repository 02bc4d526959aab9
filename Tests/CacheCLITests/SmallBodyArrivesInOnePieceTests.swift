import Foundation
import Testing
import CacheCLI
import CacheTestSupport

/// README's exception to "get writes the body as it arrives": a body announced as at most 1 MiB (the transport's
/// `smallBodyLimit`) is collected in memory, so a failed transfer of it writes nothing, leaves `-o FILE` as it was
/// and keeps nothing to resume; a larger one leaves its received bytes in FILE and a partial entry.
@Suite struct SmallBodyArrivesInOnePieceTests {
    @Test func aTruncatedSmallBodyLeavesTheOutputUntouchedAndKeepsNothing() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/small", headers: [("Cache-Control", "max-age=600")], size: 500_000,
                                   etag: "\"v1\"", truncate: true)
        try await origin.configure(path: "/large", headers: [("Cache-Control", "max-age=600")], size: 3_000_000,
                                   etag: "\"v1\"", truncate: true)
        let output = cli.directory.appendingPathComponent("out.bin")
        try Data("old".utf8).write(to: output)
        let small = await cli.run(["get", "-o", output.path, origin.url("/small").absoluteString])
        #expect(small.code == 18)
        #expect(try Data(contentsOf: output) == Data("old".utf8))
        #expect(!(await cli.run(["ls"])).out.contains("partial"))
        let large = await cli.run(["get", "-o", output.path, origin.url("/large").absoluteString])
        #expect(large.code == 18)
        #expect(try Data(contentsOf: output).count > 3)
        #expect((await cli.run(["ls"])).out.contains("partial"))
    }
}
