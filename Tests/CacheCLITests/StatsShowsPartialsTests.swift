import Foundation
import Testing
import CacheCLI
import CacheTestSupport

/// `stats` shows the partial entries (bytes of interrupted transfers kept to resume): their count and bytes, in
/// text and `--json`, and counts them against `--max-disk` as the store's eviction does.
@Suite struct StatsShowsPartialsTests {
    @Test func statsCountsThePartialsKeptToResume() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        // A third of the body, unpaced, then held: the 1 s limit always comes before the body's end.
        try await origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], size: 3_000_000,
                                   etag: "\"v1\"", holdAfter: 1_000_000)
        #expect(await cli.run(["get", "-o", "/dev/null", origin.url("/size/1000").absoluteString]).code == 0)
        let before = await cli.run(["stats"])
        #expect(MaxDiskTrimTests.row(before.out, "partials:") == "0 (0 B kept to resume interrupted downloads)", "\(before.out)")
        let run = await cli.run(["get", "--max-time", "1", "-o", "/dev/null", origin.url("/slow").absoluteString])
        #expect(run.code == 28)
        let json = try await cli.run(["stats", "--json"]).object()
        let kept = try #require(json["partialBytes"] as? Int)
        #expect(json["partials"] as? Int == 1)
        #expect(kept > 0 && kept < 3_000_000)
        let text = await cli.run(["stats"])
        #expect(MaxDiskTrimTests.row(text.out, "partials:")
                == "1 (\(Formatting.bytes(Int64(kept))) kept to resume interrupted downloads)", "\(text.out)")
        // 1,000 bytes of entries plus the partial's bytes are over 2 KiB: reported, nothing removed.
        let over = await cli.run(["stats", "--max-disk", "2K", "--json"])
        #expect(try over.object()["overLimit"] as? Bool == true)
        #expect(try over.object()["partials"] as? Int == 1)
        // The text names what is over the limit: the entries with the partials, not the entries' bytes alone.
        let overText = await cli.run(["stats", "--max-disk", "2K"])
        let total = Formatting.bytes(Int64(kept) + 1000)
        #expect(MaxDiskTrimTests.row(overText.out, "over limit:")?
                    .hasPrefix("entries and partials (\(total)) are over max disk (stats removes nothing)") == true,
                "\(overText.out)")
        #expect(await cli.run(["ls"]).out.contains("1 partial, "))
    }
}
