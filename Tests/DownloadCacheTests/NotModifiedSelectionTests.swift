import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// RFC 9111 §4.3.4: a 304 whose validator does not select the stored response is not used; the cache asks
/// again without conditions. A 304 without any validator freshens the response the cache asked about.
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

    /// The origin answers the cache's `If-None-Match` with a 304 that leaves out the `ETag` RFC 9110 §15.4.5 asks
    /// for: it answers the one response the request asked about, which is freshened, not fetched again.
    @Test func notModifiedWithoutValidatorFreshensTheValidatedResponse() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/bare", headers: [("Cache-Control", "max-age=0")], body: "kept",
                                         etag: "\"A\"", notModifiedHeaders: [("Cache-Control", "max-age=3600")])
            #expect(try await h.get("/bare").text == "kept")
            let revalidated = try await h.get("/bare")
            #expect(revalidated.source == .revalidated && revalidated.text == "kept")
            #expect(revalidated.headers.first("ETag") == "\"A\"")
            let hit = try await h.get("/bare")
            #expect(hit.source == .cache && hit.text == "kept")
            let hits = try await h.hits("/bare")
            #expect(hits.total == 2 && hits.notModified == 1)
        }
    }

    /// The stored response has no validator, so the caller's own `If-None-Match` goes to the origin as written;
    /// its 304 says the caller's copy is current, not the stored one (which may be an older version): the caller
    /// gets the 304, and the stored response is not freshened by it.
    @Test func notModifiedToTheCallersOwnValidatorFreshensNothing() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/own", headers: [("Cache-Control", "max-age=0")], body: "Y-old")
            #expect(try await h.get("/own").text == "Y-old")
            try await h.origin.configure(path: "/own", headers: [("Cache-Control", "max-age=0")], body: "X-new",
                                         notModifiedHeaders: [("Cache-Control", "max-age=600")])
            var conditional = HTTPHeaders()
            conditional.add("If-None-Match", "\"x-new\"")
            let answer = try await h.get("/own", headers: conditional)
            #expect(answer.status == 304 && answer.source == .network)
            let next = try await h.get("/own")
            #expect(next.source == .network && next.text == "X-new")
            let hits = try await h.hits("/own")
            #expect(hits.total == 3 && hits.notModified == 1)
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
