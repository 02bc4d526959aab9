import Foundation
import Testing
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
@testable import CacheCLI

/// RFC 9111 §4.3.2 through `dlcache driver`, in both modes: a cache holding a fresh response answers the client's
/// own If-None-Match / If-Modified-Since with a 304 carrying ETag, without asking the origin.
@Suite(.serialized) struct ClientConditionalDriverTests {
    static let lastModified = "Mon, 01 Jan 2024 00:00:00 GMT"

    @Test(arguments: CacheMode.allCases)
    func freshStoredResponseAnswersTheClientsValidators(mode: CacheMode) async throws {
        try await withDriver(mode: mode) { driver in
            try await driver.origin.configure(path: "/c", headers: [("Cache-Control", "max-age=3600"), ("Content-Type", "text/plain")],
                                              body: "body", etag: "\"abc\"", lastModified: Self.lastModified)
            _ = try await driver.roundTrip(id: 0, path: "/c")
            let strong = try await driver.roundTrip(id: 1, path: "/c", headers: [["If-None-Match", "\"abc\""]])
            #expect(strong.status == 304, "\(strong.raw)")
            #expect(strong.header("ETag") == ["\"abc\""])
            #expect(strong.header("Content-Type").isEmpty)
            #expect(strong.body == "")
            let weak = try await driver.roundTrip(id: 2, path: "/c", headers: [["If-None-Match", "\"x\", W/\"abc\""]])
            #expect(weak.status == 304)
            let other = try await driver.roundTrip(id: 3, path: "/c", headers: [["If-None-Match", "\"x\""]])
            #expect(other.status == 200 && other.body == "body")
            // If-None-Match takes precedence over a matching If-Modified-Since.
            let precedence = try await driver.roundTrip(id: 4, path: "/c", headers: [
                ["If-None-Match", "\"x\""], ["If-Modified-Since", "Tue, 02 Jan 2024 00:00:00 GMT"]])
            #expect(precedence.status == 200 && precedence.body == "body")
            let since = try await driver.roundTrip(id: 5, path: "/c", headers: [["If-Modified-Since", "Tue, 02 Jan 2024 00:00:00 GMT"]])
            #expect(since.status == 304)
            #expect(since.header("ETag") == ["\"abc\""])
            let rfc850 = try await driver.roundTrip(id: 6, path: "/c", headers: [["If-Modified-Since", "Monday, 01-Jan-24 00:00:00 GMT"]])
            #expect(rfc850.status == 304)
            let earlier = try await driver.roundTrip(id: 7, path: "/c", headers: [["If-Modified-Since", "Sun, 31 Dec 2023 00:00:00 GMT"]])
            #expect(earlier.status == 200 && earlier.body == "body")
            #expect(try await driver.origin.hits("/c").total == 1)
        }
    }
}
