import Foundation
import Testing
import CacheCLI
import CacheTestSupport

/// `rm URL` and `rm --prefix` remove the URL's partial entry too (the kept bytes of an interrupted download), as
/// README says; a URL with only a partial is not "nothing stored".
@Suite struct RemoveTakesThePartialTooTests {
    @Test func rmRemovesAPartialEntry() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        // A third of the body, unpaced, then held: the 1 s limit always comes before the body's end.
        try await origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], size: 3_000_000,
                                   etag: "\"v1\"", holdAfter: 1_000_000)
        let url = origin.url("/slow").absoluteString
        #expect(await cli.run(["get", "--max-time", "1", "-o", "/dev/null", url]).code == 28)
        #expect((await cli.run(["ls"])).out.contains("partial"))
        let rm = await cli.run(["rm", url])
        #expect(rm.code == 0, "\(rm.err)")
        #expect(rm.out == "removed 1 partial (kept bytes of an interrupted download) for \(url)\n", "\(rm.out)")
        #expect(!(await cli.run(["ls"])).out.contains("partial"))
        #expect(await cli.run(["rm", url]).code == 1)
    }

    @Test func rmPrefixRemovesPartialEntries() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        // A third of the body, unpaced, then held: the 1 s limit always comes before the body's end.
        try await origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], size: 3_000_000,
                                   etag: "\"v1\"", holdAfter: 1_000_000)
        let url = origin.url("/slow").absoluteString
        #expect(await cli.run(["get", "--max-time", "1", "-o", "/dev/null", url]).code == 28)
        let prefix = origin.url("/sl").absoluteString
        let dry = await cli.run(["rm", "--prefix", prefix, "--dry-run"])
        #expect(dry.out == "would remove \(url)\nwould remove 0 entries and 1 partial (1 URL) under \(prefix)\n", "\(dry.out)")
        #expect((await cli.run(["ls"])).out.contains("partial"))
        let json = try await cli.run(["rm", "--prefix", prefix, "--json"]).object()
        #expect(json["removedPartials"] as? Int == 1)
        #expect(!(await cli.run(["ls"])).out.contains("partial"))
    }
}
