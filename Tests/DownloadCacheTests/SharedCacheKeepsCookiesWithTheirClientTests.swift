import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// A cache in shared mode serves many clients, and a `Set-Cookie` is one client's session (RFC 9111 §3.1, §7.3):
/// a response that sets one is stored only when the origin made it `public` (or gave `s-maxage`), and then without
/// the cookie; a waiter coalesced onto another client's exchange never gets that client's cookie; after a 304 the
/// client that revalidated gets the 304's cookie, later clients do not. A private cache keeps the cookie.
@Suite struct SharedCacheKeepsCookiesWithTheirClientTests {
    @Test func aCookieResponseThatIsNotPublicIsNotStored() async throws {
        try await withHarness({ $0.mode = .shared }) { h in
            try await h.origin.configure(path: "/login", headers: [("Cache-Control", "max-age=600"),
                                                                  ("Set-Cookie", "session=alice")], body: "welcome")
            let alice = try await h.get("/login")
            #expect(alice.headers.values(for: "Set-Cookie") == ["session=alice"])
            let bob = try await h.get("/login")
            #expect(bob.source == .network, "bob was served alice's response from the cache")
            #expect(try await h.hits("/login").total == 2)
            #expect(h.storedVariants("/login").isEmpty)
        }
    }

    @Test func ignoringCacheControlDoesNotStoreACookieResponse() async throws {
        try await withHarness({ $0.mode = .shared }) { h in
            try await h.origin.configure(path: "/i", headers: [("Cache-Control", "public, max-age=600"),
                                                              ("Set-Cookie", "session=alice")], body: "i")
            var ignoring = RequestOptions()
            ignoring.ignoreServerCacheControl = true
            _ = try await h.get("/i", ignoring)
            let second = try await h.get("/i", ignoring)
            #expect(second.source == .network)
            #expect(try await h.hits("/i").total == 2)
        }
    }

    @Test func aPublicCookieResponseIsStoredAndServedWithoutTheCookie() async throws {
        try await withHarness({ $0.mode = .shared }) { h in
            try await h.origin.configure(path: "/pub", headers: [("Cache-Control", "public, max-age=600"),
                                                                ("Set-Cookie", "session=alice")], body: "for all")
            let alice = try await h.get("/pub")
            #expect(alice.headers.values(for: "Set-Cookie") == ["session=alice"])
            let bob = try await h.get("/pub")
            #expect(bob.source == .cache && bob.text == "for all")
            #expect(!bob.headers.contains("Set-Cookie"), "bob got alice's cookie: \(bob.headers)")
            #expect(try await h.hits("/pub").total == 1)
            // Not on disk either: a reopened cache (another process) has nothing to hand out.
            let reopened = try h.reopen()
            let carol = try await reopened.response(for: CacheRequest(url: h.origin.url("/pub")))
            #expect(carol.source == .cache && !carol.headers.contains("Set-Cookie"))
        }
    }

    @Test func aCoalescedWaiterDoesNotGetAnotherClientsCookie() async throws {
        try await withHarness({ $0.mode = .shared }) { h in
            try await h.origin.configure(path: "/c", headers: [("Cache-Control", "public, max-age=600"),
                                                              ("Set-Cookie", "session=first")], body: "c", delay: 0.5)
            let responses = try await withThrowingTaskGroup(of: CachedResponse.self) { group in
                for _ in 0..<3 { group.addTask { try await h.get("/c") } }
                return try await group.reduce(into: [CachedResponse]()) { $0.append($1) }
            }
            #expect(try await h.hits("/c").total == 1)
            let withCookie = responses.filter { $0.headers.contains("Set-Cookie") }
            #expect(withCookie.count == 1, "\(responses.map { ($0.headers.values(for: "Set-Cookie"), $0.cacheStatus.collapsed) })")
            #expect(withCookie.allSatisfy { !$0.cacheStatus.collapsed })
        }
    }

    @Test func theRevalidatingClientGetsThe304sCookieAndNobodyElse() async throws {
        try await withHarness({ $0.mode = .shared }) { h in
            // The first response has an ETag, so once stale it is revalidated; every conditional GET gets a 304.
            try await h.origin.configure(path: "/r", headers: [("Cache-Control", "public, max-age=10"), ("ETag", "\"r1\"")],
                                         body: "r",
                                         notModifiedHeaders: [("ETag", "\"r1\""), ("Cache-Control", "public, max-age=10"),
                                                              ("Set-Cookie", "session=revalidator")])
            _ = try await h.get("/r")
            try await h.advance(by: 20)
            let revalidator = try await h.get("/r")
            #expect(revalidator.source == .revalidated)
            #expect(revalidator.headers.values(for: "Set-Cookie") == ["session=revalidator"])
            let next = try await h.get("/r")
            #expect(next.source == .cache && next.text == "r")
            #expect(!next.headers.contains("Set-Cookie"), "the next client got the revalidator's cookie")
            let hits = try await h.hits("/r")
            #expect(hits.total == 2 && hits.notModified == 1)
        }
    }

    /// A namespace used as a private cache first (its entries keep their cookie) and then as a shared one: the
    /// shared cache serves those it could have stored itself (`public`) without it (one that is not `public` is a
    /// miss: AResponseStoredPrivatelyIsServedByASharedCacheOnlyAsSharedTests).
    @Test func aCookieStoredByAPrivateCacheIsNotServedByASharedOne() async throws {
        try await withHarness({ $0.mode = .private }) { h in
            try await h.origin.configure(path: "/m", headers: [("Cache-Control", "public, max-age=600"),
                                                              ("Set-Cookie", "session=alice")], body: "m")
            _ = try await h.get("/m")
            await h.cache.close()
            var configuration = h.cache.configuration
            configuration.mode = .shared
            let shared = try DownloadCache(configuration: configuration)
            let bob = try await shared.response(for: CacheRequest(url: h.origin.url("/m")))
            #expect(bob.source == .cache && bob.text == "m")
            #expect(!bob.headers.contains("Set-Cookie"), "bob got alice's cookie: \(bob.headers)")
            #expect(try await h.hits("/m").total == 1)
            await shared.close()
        }
    }

    @Test func aPrivateCacheKeepsTheCookie() async throws {
        try await withHarness({ $0.mode = .private }) { h in
            try await h.origin.configure(path: "/p", headers: [("Cache-Control", "max-age=600"),
                                                              ("Set-Cookie", "session=me")], body: "p")
            _ = try await h.get("/p")
            let again = try await h.get("/p")
            #expect(again.source == .cache && again.headers.values(for: "Set-Cookie") == ["session=me"])
            #expect(try await h.hits("/p").total == 1)
        }
    }
    /// A transfer resumed with a 206 that sets a cookie: the storability decision sees the cookie (without
    /// public/s-maxage the completed response is not stored), the client whose request it answered gets it, and
    /// a stored copy (public) never carries it.
    @Test(arguments: ["max-age=600", "public, max-age=600"])
    func aResumed206ThatSetsACookieKeepsItWithItsClient(cacheControl: String) async throws {
        try await withHarness({ $0.mode = .shared }) { h in
            let size = ResumeInterruptedTransferTests.size
            let kept = try await ResumeInterruptedTransferTests.interruptedByTruncation(h, "/r")
            #expect(kept > 0)
            try await h.origin.configure(path: "/r", headers: [("Cache-Control", cacheControl),
                                                              ("Set-Cookie", "session=alice")],
                                         size: size, etag: "\"v1\"")
            let alice = try await h.get("/r")
            #expect(alice.status == 200 && alice.bodySize == Int64(size))
            #expect(alice.headers.values(for: "Set-Cookie") == ["session=alice"])
            let hits = try await h.hits("/r")
            #expect(hits.ranged == 1, "not resumed: \(hits)")
            if cacheControl.contains("public") {
                let bob = try await h.get("/r")
                #expect(bob.source == .cache)
                #expect(!bob.headers.contains("Set-Cookie"), "bob got alice's cookie: \(bob.headers)")
                let info = try #require(h.storedVariants("/r").first)
                let stored = try #require(StoredEntryMetadata.decode(info.metadata))
                #expect(!stored.stored.response.headers.contains("Set-Cookie"))
            } else {
                #expect(h.storedVariants("/r").isEmpty, "a response setting a cookie was stored by a shared cache")
            }
        }
    }
}
