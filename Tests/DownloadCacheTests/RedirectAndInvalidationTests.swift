import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// Redirects hop by hop and unsafe-method invalidation (RFC 9111 §4.4).
@Suite struct RedirectAndInvalidationTests {
    @Test func permanentRedirectIsFollowedAndEachHopCachedUnderItsOwnKey() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/old", status: 301, headers: [("Cache-Control", "max-age=600")],
                                         body: "", redirect: "/new")
            try await h.origin.configure(path: "/new", headers: [("Cache-Control", "max-age=600")], body: "new place")
            let first = try await h.get("/old")
            #expect(first.status == 200 && first.text == "new place" && first.url == h.origin.url("/new"))
            let second = try await h.get("/old")
            #expect(second.source == .cache && second.text == "new place")
            #expect(try await h.hits("/old").total == 1)
            #expect(try await h.hits("/new").total == 1)
            // The 301 is stored under /old, the body under /new: never the target's body under the old key.
            let oldEntry = try #require(h.storedVariants("/old").first)
            let metadata = try #require(StoredEntryMetadata.decode(oldEntry.metadata))
            #expect(metadata.stored.response.status == 301 && oldEntry.bodySize == 0)
            #expect(h.storedVariants("/new").count == 1)
        }
    }

    @Test func temporaryRedirectWithoutFreshnessIsNotStored() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/tmp", status: 302, body: "", redirect: "/target")
            try await h.origin.configure(path: "/target", headers: [("Cache-Control", "max-age=600")], body: "t")
            _ = try await h.get("/tmp")
            let again = try await h.get("/tmp")
            #expect(again.text == "t" && again.source == .cache)
            #expect(try await h.hits("/tmp").total == 2)
            #expect(try await h.hits("/target").total == 1)
            #expect(h.storedVariants("/tmp").isEmpty)
        }
    }

    @Test func redirectIsReturnedAsIsWhenNotFollowing() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/hop", status: 307, body: "", redirect: "/elsewhere")
            let response = try await h.get("/hop", RequestOptions(followRedirects: false))
            #expect(response.status == 307 && response.headers.first("Location") == "/elsewhere")
            #expect(try await h.hits("/elsewhere").total == 0)
        }
    }

    @Test func redirectLoopFailsWithTooManyRedirects() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/loop", status: 302, body: "", redirect: "/loop")
            do throws(DownloadError) {
                _ = try await h.get("/loop")
                Issue.record("a redirect loop must fail")
            } catch {
                #expect(error.code == .tooManyRedirects)
            }
        }
    }

    @Test func successfulPostInvalidatesTheStoredResponse() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/doc", headers: [("Cache-Control", "max-age=600")], body: "doc")
            _ = try await h.get("/doc")
            #expect(h.storedVariants("/doc").count == 1)
            let post = try await h.cache.response(for: CacheRequest(method: "POST", url: h.origin.url("/doc")),
                                                  options: RequestOptions(body: Data("x=1".utf8)))
            #expect(post.status == 200 && post.source == .network)
            #expect(post.reason.hasSuffix("; the stored responses of 1 URI invalidated (RFC 9111 §4.4)"), "\(post.reason)")
            #expect(h.storedVariants("/doc").isEmpty)
            #expect(try await h.get("/doc").source == .network)
            let hits = try await h.hits("/doc")
            #expect(hits.methods["GET"] == 2 && hits.methods["POST"] == 1)
        }
    }
}
