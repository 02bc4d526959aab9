import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import SharedTier
import Foundation
import Testing

/// A shared-mode fleet member may find, in the shared tier, an entry that carries a `Set-Cookie` (written by any
/// other writer of the tier: an older build, a member whose namespace also holds private-mode entries). A cookie is
/// one client's state (RFC 9111 §3.1, §7.3): such an entry is served without it and stored locally without it; one
/// that sets a cookie without `public`/`s-maxage` is not used at all.
@Suite(.serialized, .enabled(if: RedisServer.isAvailable, "redis-server is not installed (Scripts/bootstrap.sh installs it)"))
struct ASharedTierEntryNeverCarriesACookieTests {
    /// Fetches `path` with a private cache (which stores the cookie) and writes that entry, cookie and all, into
    /// the tier under the shared-mode scope, as another writer of the tier could.
    static func plantWithCookie(_ fleet: Fleet, _ path: String) async throws {
        let writer = try fleet.machine("writer", tier: nil)
        _ = try await fleet.get(writer, path)
        let primary = RFC9111.primaryKey(method: "GET", url: fleet.origin.url(path))
        let info = try #require(writer.store.variants(forPrimaryKey: primary).first)
        let stored = try #require(StoredEntryMetadata.decode(info.metadata))
        #expect(RFC9111.setsCookie(stored.stored.response.headers))
        let body = try #require(writer.store.entry(for: info.key)).body
        let tier = SharedTier(configuration: try fleet.tier(), scope: "shared:default", log: { _ in })
        #expect(await tier.store(primary: primary, entry: SharedEntry(variant: info.key.variant, metadata: info.metadata,
                                                                      body: body), lifetime: 600))
    }

    @Test func aPublicEntryWithACookieIsServedAndStoredWithoutIt() async throws {
        try await withFleet { fleet in
            try await fleet.origin.configure(path: "/pub", headers: [("Cache-Control", "public, max-age=600"),
                                                                    ("Set-Cookie", "a=1"), ("SET-COOKIE", "b=1"),
                                                                    ("Set-Cookie2", "c=1")], body: "for all")
            try await Self.plantWithCookie(fleet, "/pub")
            let member = try fleet.machine("member", tier: try fleet.tier(), mode: .shared)
            let served = try await fleet.get(member, "/pub", headers: HTTPHeaders([("Cookie", "B")]))
            #expect(served.source == .cache && served.cacheStatus.detail == "shared tier", "\(served.reason)")
            #expect(served.text == "for all")
            #expect(!RFC9111.setsCookie(served.headers), "served another client's cookie: \(served.headers)")
            #expect(try await fleet.originRequests("/pub") == 1)
            await member.waitForBackgroundWork()
            let primary = RFC9111.primaryKey(method: "GET", url: fleet.origin.url("/pub"))
            let local = try #require(member.store.variants(forPrimaryKey: primary).first)
            let metadata = try #require(StoredEntryMetadata.decode(local.metadata))
            #expect(!RFC9111.setsCookie(metadata.stored.response.headers), "stored locally with the cookie")
            let again = try await fleet.get(member, "/pub")
            #expect(again.source == .cache && !RFC9111.setsCookie(again.headers))
        }
    }

    @Test func anEntryThatSetsACookieWithoutPublicIsNotUsed() async throws {
        try await withFleet { fleet in
            try await fleet.origin.configure(path: "/mine", headers: [("Cache-Control", "max-age=600"),
                                                                     ("Set-Cookie", "session=a")], body: "mine")
            try await Self.plantWithCookie(fleet, "/mine")
            let member = try fleet.machine("member", tier: try fleet.tier(), mode: .shared)
            let fetched = try await fleet.get(member, "/mine")
            #expect(fetched.source == .network)
            #expect(try await fleet.originRequests("/mine") == 2)
        }
    }
}
