import Foundation
import Testing
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
@testable import CacheCLI

/// 1xx interim responses (RFC 9110 §15.2) through `dlcache driver`: passed through in the answer's `interim`,
/// never stored (RFC 9111 §3), their fields never in the final response, and the final response is cached.
@Suite(.serialized) struct InterimResponseDriverTests {
    @Test(arguments: CacheMode.allCases)
    func interimResponsesArePassedThroughAndNeverCached(mode: CacheMode) async throws {
        try await withDriver(mode: mode) { driver in
            try await driver.origin.configure(
                path: "/i", headers: [("Cache-Control", "max-age=100000")], body: "final",
                interim: [(102, []), (103, [("Link", "</styles.css>; rel=preload; as=style"), ("X-My-Header", "test")])])
            let first = try await driver.roundTrip(id: 1, path: "/i")
            #expect(first.status == 200 && first.body == "final", "\(first.raw)")
            let interim = try #require(first.object["interim"] as? [[String: Any]], "\(first.raw)")
            #expect(interim.count == 2)
            #expect(interim.first?["status"] as? Int == 102)
            #expect(interim.last?["status"] as? Int == 103)
            #expect(interim.last?["headers"] as? [[String]] == [["Link", "</styles.css>; rel=preload; as=style"],
                                                               ["X-My-Header", "test"]])
            #expect(first.header("Link").isEmpty && first.header("X-My-Header").isEmpty)

            let second = try await driver.roundTrip(id: 2, path: "/i")
            #expect(second.status == 200 && second.body == "final")
            #expect(second.object["interim"] == nil)
            #expect(second.header("Link").isEmpty && second.header("X-My-Header").isEmpty)
            #expect(try await driver.origin.hits("/i").total == 1)
        }
    }
}
