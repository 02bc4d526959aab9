import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// A private cache and a shared one may use the same namespace (the CLI's `get` and `prefetch` are private, `driver
/// --mode shared` reads the same `default`): the shared rule is applied when serving too (RFC 9111 §3.1, §5.2.2.7,
/// §7.3). A stored response that is `private`, or sets a cookie without `public`/`s-maxage`, is a miss for a shared
/// cache and stays stored for the private one; any other is served to the shared cache's clients without its cookies.
@Suite struct AResponseStoredPrivatelyIsServedByASharedCacheOnlyAsSharedTests {
    /// A shared-mode cache on the harness's directory and namespace.
    static func sharedCache(_ h: Harness) throws -> DownloadCache {
        var configuration = h.cache.configuration
        configuration.mode = .shared
        return try DownloadCache(configuration: configuration)
    }

    static func get(_ cache: DownloadCache, _ h: Harness, _ path: String, cookie: String) async throws -> CachedResponse {
        try await cache.response(for: CacheRequest(url: h.origin.url(path), headers: HTTPHeaders([("Cookie", cookie)])))
    }

    @Test func aCookieStoredPrivatelyIsNotServedToASharedCachesClients() async throws {
        try await withHarness({ $0.mode = .private }) { h in
            try await h.origin.configure(path: "/plain", headers: [("Cache-Control", "max-age=600"),
                                                                  ("Set-Cookie", "s=1")], body: "for A")
            let a = try await Self.get(h.cache, h, "/plain", cookie: "A")
            #expect(a.source == .network && a.headers.values(for: "Set-Cookie") == ["s=1"])
            let shared = try Self.sharedCache(h)
            let b = try await Self.get(shared, h, "/plain", cookie: "B")
            #expect(b.source == .network, "B was served A's stored response: \(b.reason)")
            #expect(try await h.hits("/plain").total == 2)
            // Left stored for the private cache, which still answers from it.
            let againA = try await Self.get(h.cache, h, "/plain", cookie: "A")
            #expect(againA.source == .cache && againA.headers.values(for: "Set-Cookie") == ["s=1"])
            #expect(try await h.hits("/plain").total == 2)
        }
    }

    @Test func aPrivateResponseStoredPrivatelyIsNotServedByASharedCache() async throws {
        try await withHarness({ $0.mode = .private }) { h in
            try await h.origin.configure(path: "/private", headers: [("Cache-Control", "private, max-age=600")],
                                         body: "mine")
            _ = try await Self.get(h.cache, h, "/private", cookie: "A")
            let b = try await Self.get(try Self.sharedCache(h), h, "/private", cookie: "B")
            #expect(b.source == .network, "\(b.reason)")
            #expect(try await h.hits("/private").total == 2)
        }
    }

    @Test func aPublicCookieResponseStoredPrivatelyIsServedWithoutTheCookie() async throws {
        try await withHarness({ $0.mode = .private }) { h in
            try await h.origin.configure(path: "/pub", headers: [("Cache-Control", "public, max-age=600"),
                                                                ("Set-Cookie", "s=1"), ("set-cookie2", "t=1")],
                                         body: "for all")
            _ = try await Self.get(h.cache, h, "/pub", cookie: "A")
            let shared = try Self.sharedCache(h)
            let b = try await Self.get(shared, h, "/pub", cookie: "B")
            #expect(b.source == .cache && b.text == "for all", "\(b.reason)")
            #expect(!RFC9111.setsCookie(b.headers), "B got A's cookie: \(b.headers)")
            #expect(try await h.hits("/pub").total == 1)
        }
    }
}
