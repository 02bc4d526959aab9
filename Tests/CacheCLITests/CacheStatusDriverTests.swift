import Foundation
import Testing
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
@testable import CacheCLI

/// RFC 9211 through `dlcache driver`: every answer carries this cache's `Cache-Status` member, last.
@Suite(.serialized) struct CacheStatusDriverTests {
    @Test func missHitVaryMissRevalidationAndStaleAreTold() async throws {
        try await withDriver { driver in
            try await driver.origin.configure(path: "/a", headers: [("Cache-Control", "max-age=60"), ("Vary", "Accept-Language"),
                                                                    ("Cache-Status", "upstream; hit")],
                                              body: "a", etag: "\"a\"")
            let miss = try await driver.roundTrip(id: 1, path: "/a", headers: [["Accept-Language", "en"]])
            #expect(miss.header("Cache-Status") == ["upstream; hit", "dlcache; fwd=uri-miss; fwd-status=200; ttl=60; stored"])
            #expect(miss.headerPairs.last?.first == "Cache-Status")
            driver.clock.advance(by: 10)
            try await driver.origin.setClockOffset(10)  // the origin's Date follows the fixed clock
            let hit = try await driver.roundTrip(id: 2, path: "/a", headers: [["Accept-Language", "en"]])
            #expect(hit.header("Cache-Status").last == "dlcache; hit; ttl=50")
            let varyMiss = try await driver.roundTrip(id: 3, path: "/a", headers: [["Accept-Language", "de"]])
            #expect(varyMiss.header("Cache-Status").last == "dlcache; fwd=vary-miss; fwd-status=200; ttl=60; stored")
            let request = try await driver.roundTrip(id: 4, path: "/a", headers: [["Accept-Language", "en"], ["Cache-Control", "no-cache"]])
            #expect(request.header("Cache-Status").last == "dlcache; fwd=request; fwd-status=304; ttl=60; stored")
            driver.clock.advance(by: 100)
            try await driver.origin.setClockOffset(110)
            let stale = try await driver.roundTrip(id: 5, path: "/a", headers: [["Accept-Language", "en"]])
            #expect(stale.header("Cache-Status").last == "dlcache; fwd=stale; fwd-status=304; ttl=60; stored")
            driver.clock.advance(by: 100)
            try await driver.origin.configure(path: "/a", drop: true)
            let disconnected = try await driver.roundTrip(id: 6, path: "/a", headers: [["Accept-Language", "en"]])
            #expect(disconnected.header("Cache-Status").last == #"dlcache; fwd=stale; ttl=-40; detail="served stale while disconnected""#)
        }
    }

    @Test func unstoredAndUnsafeResponsesSayWhy() async throws {
        try await withDriver { driver in
            try await driver.origin.configure(path: "/n", headers: [("Cache-Control", "no-store")], body: "n")
            let unstored = try await driver.roundTrip(id: 1, path: "/n")
            #expect(unstored.header("Cache-Status") == ["dlcache; fwd=uri-miss; fwd-status=200"])
            let post = try await driver.roundTrip(id: 2, path: "/n", method: "POST", body: "x")
            #expect(post.header("Cache-Status") == ["dlcache; fwd=method; fwd-status=200"])
        }
    }
}
