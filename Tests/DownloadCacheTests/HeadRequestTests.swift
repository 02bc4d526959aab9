import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// HEAD (RFC 9111 §4.3.5): answered from a fresh stored GET response, sent to the origin once it is stale; a HEAD
/// response freshens the stored GET response, or invalidates it when its validator differs.
@Suite struct HeadRequestTests {
    /// HEAD is answered from a fresh stored GET response (RFC 9111 §4.3.5) and goes to the origin once stale.
    @Test func headIsAnsweredFromAFreshStoredGet() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/hg", headers: [("Cache-Control", "max-age=600")], body: "body",
                                         etag: "\"g\"")
            _ = try await h.get("/hg")
            let head = try await h.cache.response(for: CacheRequest(method: "HEAD", url: h.origin.url("/hg")))
            #expect(head.source == .cache && head.status == 200 && head.bodySize == 0 && head.isFresh)
            #expect(head.headers.first("ETag") == "\"g\"" && head.headers.first("Content-Length") == "4")
            #expect(try await h.hits("/hg").methods["HEAD"] == nil)
            try await h.advance(by: 700)
            let late = try await h.cache.response(for: CacheRequest(method: "HEAD", url: h.origin.url("/hg")))
            #expect(late.source == .network)
            #expect(try await h.hits("/hg").methods["HEAD"] == 1)
        }
    }

    @Test func headFreshensTheStoredGetResponse() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/h", headers: [("Cache-Control", "max-age=10")], body: "head me",
                                         etag: "\"h1\"")
            _ = try await h.get("/h")
            try await h.advance(by: 60)
            let head = try await h.cache.response(for: CacheRequest(method: "HEAD", url: h.origin.url("/h")))
            #expect(head.status == 200 && head.bodySize == 0)
            let get = try await h.get("/h")
            #expect(get.source == .cache && get.text == "head me")
            #expect(try await h.hits("/h").methods["GET"] == 1)
        }
    }

    @Test func headWithANewValidatorInvalidatesTheStoredResponse() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/h2", headers: [("Cache-Control", "max-age=600")], body: "v1",
                                         etag: "\"1\"")
            _ = try await h.get("/h2")
            try await h.origin.configure(path: "/h2", headers: [("Cache-Control", "max-age=600")], body: "v2",
                                         etag: "\"2\"")
            try await h.advance(by: 601)   // stale: a fresh stored GET would answer the HEAD itself
            _ = try await h.cache.response(for: CacheRequest(method: "HEAD", url: h.origin.url("/h2")))
            let get = try await h.get("/h2")
            #expect(get.source == .network && get.text == "v2")
        }
    }
}
