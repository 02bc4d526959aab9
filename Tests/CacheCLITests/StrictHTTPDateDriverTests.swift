import Foundation
import Testing
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
@testable import CacheCLI

/// RFC 9110 §5.6.7 through `dlcache driver`: a response whose `Expires` is not one of the three HTTP-date formats
/// is stale at once (RFC 9111 §5.3), so the second request goes to the origin.
@Suite(.serialized) struct StrictHTTPDateDriverTests {
    static let invalidExpires = [
        "Thu, 18 Aug 2050 02:01:18 UTC", "Thu, 18 Aug 50 02:01:18 GMT", "Thu 18 Aug 2050 02:01:18 GMT",
        "Thu, 18  Aug  2050 02:01:18 GMT", "Thu, 18-Aug-2050 02:01:18 GMT", "Thu, 18 Aug 2050 2:01:18 GMT",
    ]

    @Test(arguments: CacheMode.allCases)
    func invalidExpiresIsNeverServedFromCache(mode: CacheMode) async throws {
        try await withDriver(mode: mode) { driver in
            for (index, expires) in Self.invalidExpires.enumerated() {
                let path = "/expires-\(index)"
                try await driver.origin.configure(path: path, headers: [("Expires", expires)], body: "x")
                _ = try await driver.roundTrip(id: index * 2, path: path)
                let second = try await driver.roundTrip(id: index * 2 + 1, path: path)
                #expect(second.status == 200)
                #expect(try await driver.origin.hits(path).total == 2, "\(expires) was served from the cache")
            }
            try await driver.origin.configure(path: "/valid", headers: [("Expires", "Thu, 18 Aug 2050 02:01:18 GMT")], body: "x")
            _ = try await driver.roundTrip(id: "v1", path: "/valid")
            _ = try await driver.roundTrip(id: "v2", path: "/valid")
            #expect(try await driver.origin.hits("/valid").total == 1)
        }
    }
}
