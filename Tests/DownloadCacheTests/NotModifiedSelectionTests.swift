import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// RFC 9111 §4.3.4: a 304 whose validator does not select the stored response is not used; the cache asks
/// again without conditions.
@Suite struct NotModifiedSelectionTests {
    @Test func mismatchedETagLeadsToAnUnconditionalRequest() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/x", headers: [("Cache-Control", "max-age=0")], body: "old", etag: "\"A\"")
            #expect(try await h.get("/x").text == "old")
            try await h.origin.configure(path: "/x", headers: [("Cache-Control", "max-age=0")], body: "new", etag: "\"C\"",
                                         notModifiedHeaders: [("ETag", "\"B\""), ("Content-Type", "text/evil"),
                                                              ("Set-Cookie", "injected=1")])
            let response = try await h.get("/x")
            #expect(response.source == .network && response.text == "new")
            #expect(response.headers.first("ETag") == "\"C\"")
            #expect(!response.headers.contains("Set-Cookie") && response.headers.first("Content-Type") != "text/evil")
            let hits = try await h.hits("/x")
            #expect(hits.total == 3 && hits.notModified == 1)
            // What is stored now is the new response, not the old body with the 304's fields.
            let stored = try #require(h.storedVariants("/x").first.flatMap { StoredEntryMetadata.decode($0.metadata) })
            #expect(stored.stored.response.headers.first("ETag") == "\"C\"")
            #expect(!stored.stored.response.headers.contains("Set-Cookie"))
        }
    }

    @Test func matchingETagStillFreshens() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/y", headers: [("Cache-Control", "max-age=0")], body: "same", etag: "\"A\"")
            _ = try await h.get("/y")
            let response = try await h.get("/y")
            #expect(response.source == .revalidated && response.text == "same")
            #expect(try await h.hits("/y").total == 2)
        }
    }
}
