import CacheStore
import CacheTestSupport
import DownloadCache
import Foundation
import HTTPCacheSemantics
import Testing

/// The URL an entry's metadata holds is read from the index, which another program may have edited: `ls`,
/// `info` and `verify` print it with its control characters escaped (an ESC sequence would retitle the window,
/// hide text or move the cursor), as they print origin header fields.
@Suite struct StoredURLsArePrintedEscapedTests {
    static let planted = "http://example.com/\u{1B}]0;pwned\u{07}\u{1B}[8mhidden\u{9B}2J"

    @Test func lsAndInfoEscapeAPlantedURL() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/x", headers: [("Cache-Control", "max-age=600")], body: "x")
        let url = origin.url("/x").absoluteString
        #expect(await cli.run(["get", "-o", "/dev/null", url]).code == 0)
        do {
            let cache = try DownloadCache(configuration: .init(directory: cli.directory))
            let info = try #require(cache.store.allEntries().first)
            var metadata = try #require(StoredEntryMetadata.decode(info.metadata))
            metadata.url = Self.planted
            try cache.store.updateMetadata(try metadata.encoded(), for: info.key)
            await cache.close()
        }
        for args in [["ls"], ["info", url]] {
            let run = await cli.run(args)
            #expect(run.code == 0, "\(args): \(run.err)")
            #expect(OriginControlBytesTests.rawControls(Data(run.out.utf8)) == [], "\(args): \(run.out.debugDescription)")
            #expect(run.out.contains(#"http://example.com/\x1b]0;pwned\x07\x1b[8mhidden\u{9b}2J"#), "\(args): \(run.out.debugDescription)")
        }
    }
}
