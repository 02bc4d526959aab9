import Foundation
import Testing
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
@testable import CacheCLI

/// A `get` that cannot reach the origin hints at `--fallback-to-cache` only when that flag would serve a stored
/// copy: a must-revalidate or no-cache response is never served stale, so no hint for it.
@Suite(.serialized) struct StaleCopyHintTests {
    @Test func unreachableOriginWithAStoredCopyMentionsFallbackToCache() async throws {
        let origin = try await OriginServer.start()
        let cli = try CLIHarness()
        defer { origin.stop(); cli.cleanUp() }
        try await origin.configure(path: "/stale", headers: [("Cache-Control", "max-age=0")], body: "old")
        let stale = origin.url("/stale").absoluteString
        let other = origin.url("/never").absoluteString
        #expect(await cli.run(["get", stale]).code == 0)
        origin.stop()

        let hinted = await cli.run(["get", "--no-stale-when-disconnected", stale])
        #expect(hinted.code == 7)
        #expect(hinted.err.hasPrefix("Error: network error: cannot connect to the origin for \(stale)"))
        #expect(hinted.err.hasSuffix(" (a stale copy is stored: --fallback-to-cache serves it)\n"))
        let plain = await cli.run(["get", other])
        #expect(plain.code == 7)
        #expect(!plain.err.contains("--fallback-to-cache"))
        let served = await cli.run(["get", "--fallback-to-cache", stale])
        #expect(served.code == 0)
        #expect(served.out == "old")
    }

    @Test func unreachableOriginWithAMustRevalidateCopyDoesNotOfferFallbackToCache() async throws {
        let origin = try await OriginServer.start()
        let cli = try CLIHarness()
        defer { origin.stop(); cli.cleanUp() }
        try await origin.configure(path: "/strict", headers: [("Cache-Control", "max-age=0, must-revalidate")], body: "old")
        try await origin.configure(path: "/revalidated", headers: [("Cache-Control", "no-cache")], body: "old")
        let strict = origin.url("/strict").absoluteString
        let revalidated = origin.url("/revalidated").absoluteString
        #expect(await cli.run(["get", strict]).code == 0)
        #expect(await cli.run(["get", revalidated]).code == 0)
        origin.stop()

        for url in [strict, revalidated] {
            let refused = await cli.run(["get", url])
            #expect(refused.code == 7)
            #expect(refused.err.hasPrefix("Error: network error: cannot connect to the origin for \(url)"))
            #expect(!refused.err.contains("--fallback-to-cache"), "\(refused.err)")
            let fallback = await cli.run(["get", "--fallback-to-cache", url])
            #expect(fallback.code == 7)
            #expect(fallback.out.isEmpty)
        }
    }
}
