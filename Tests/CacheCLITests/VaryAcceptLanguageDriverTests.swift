import Foundation
import Testing
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
@testable import CacheCLI

/// `Vary: Accept-Language` through `dlcache driver`: order, case and whitespace do not make a miss, and a request
/// whose most preferred language is the stored `Content-Language` is served from the cache.
@Suite(.serialized) struct VaryAcceptLanguageDriverTests {
    @Test func equivalentAndSelectingAcceptLanguageAreHits() async throws {
        try await withDriver { driver in
            try await driver.origin.configure(path: "/l", headers: [("Cache-Control", "max-age=5000"), ("Vary", "Accept-Language"),
                                                                    ("Content-Language", "de")], body: "Hallo")
            _ = try await driver.roundTrip(id: 1, path: "/l", headers: [["Accept-Language", "en, de"]])
            for (id, value) in [(2, "de, en"), (3, "EN, DE"), (4, " en ,   de"), (5, "fr;q=0.5, de;q=1.0")] {
                let answer = try await driver.roundTrip(id: id, path: "/l", headers: [["Accept-Language", value]])
                #expect(answer.body == "Hallo")
                #expect(answer.header("Cache-Status").last?.hasPrefix("dlcache; hit") == true, "\(value): \(answer.raw)")
            }
            #expect(try await driver.origin.hits("/l").total == 1)
            _ = try await driver.roundTrip(id: 6, path: "/l", headers: [["Accept-Language", "fr"]])
            #expect(try await driver.origin.hits("/l").total == 2)
        }
    }
}
