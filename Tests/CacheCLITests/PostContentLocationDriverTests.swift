import Foundation
import Testing
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
@testable import CacheCLI

/// RFC 9110 §9.3.3 through `dlcache driver`: a fresh POST response whose Content-Location is its own URI answers
/// the next GET from the cache; without Content-Location the GET goes to the origin.
@Suite(.serialized) struct PostContentLocationDriverTests {
    @Test func postResponseAnswersALaterGet() async throws {
        try await withDriver { driver in
            let url = driver.origin.url("/p").absoluteString
            try await driver.origin.configure(path: "/p", headers: [("Cache-Control", "max-age=3600"), ("Content-Location", url)],
                                              body: "posted")
            let post = try await driver.roundTrip(id: 1, path: "/p", method: "POST", body: "x")
            #expect(post.status == 200 && post.body == "posted")
            let get = try await driver.roundTrip(id: 2, path: "/p")
            #expect(get.body == "posted")
            #expect(try await driver.origin.hits("/p").methods["GET"] == nil)

            try await driver.origin.configure(path: "/q", headers: [("Cache-Control", "max-age=3600")], body: "posted")
            _ = try await driver.roundTrip(id: 3, path: "/q", method: "POST", body: "x")
            _ = try await driver.roundTrip(id: 4, path: "/q")
            #expect(try await driver.origin.hits("/q").methods["GET"] == 1)
        }
    }
}
