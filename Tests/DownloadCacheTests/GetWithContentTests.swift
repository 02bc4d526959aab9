import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// RFC 9110 §9.3.1: content in a GET has no generally defined semantics, so a GET with content goes to the
/// origin every time, is never answered from a stored response and never replaces one.
@Suite struct GetWithContentTests {
    @Test func aGetWithContentIsNeitherServedFromNorStoredInTheCache() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/g", headers: [("Cache-Control", "max-age=600")], body: "plain")
            #expect(try await h.get("/g").source == .network)
            #expect(try await h.get("/g").source == .cache)
            #expect(try await h.hits("/g").total == 1)
            for round in 1...2 {
                let withContent = try await h.get("/g", RequestOptions(body: Data("q=1".utf8)))
                #expect(withContent.source == .network, "round \(round)")
                let hits = try await h.hits("/g").total
                #expect(hits == 1 + round, "\(hits)")
            }
            let plain = try await h.get("/g")
            #expect(plain.source == .cache && plain.text == "plain")
            #expect(try await h.hits("/g").total == 3)
            #expect(h.storedVariants("/g").count == 1)
        }
    }
}
