import Foundation
import Testing
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
@testable import CacheCLI

/// RFC 9111 §4.2.4 through `dlcache driver`: when the origin closes the connection without answering, a stale
/// stored response is served — unless must-revalidate, no-cache, or in shared mode proxy-revalidate / s-maxage
/// forbid it, in which case the answer is the error.
@Suite(.serialized) struct ServeStaleWhenDisconnectedDriverTests {
    @Test(arguments: CacheMode.allCases)
    func staleIsServedWhenTheOriginClosesTheConnection(mode: CacheMode) async throws {
        try await withDriver(mode: mode) { driver in
            try await driver.origin.configure(path: "/close", headers: [("Cache-Control", "max-age=2")], body: "kept")
            _ = try await driver.roundTrip(id: 1, path: "/close")
            driver.clock.advance(by: 10)
            try await driver.origin.configure(path: "/close", drop: true)
            let answer = try await driver.roundTrip(id: 2, path: "/close")
            #expect(answer.status == 200, "\(answer.raw)")
            #expect(answer.body == "kept")
        }
    }

    static let forbidden: [(String, CacheMode)] = [
        ("must-revalidate", .private), ("no-cache", .private), ("must-revalidate", .shared), ("no-cache", .shared),
        ("proxy-revalidate", .shared), ("s-maxage=2", .shared),
    ]

    @Test(arguments: forbidden)
    func aDirectiveForbidsServingStale(directive: String, mode: CacheMode) async throws {
        try await withDriver(mode: mode) { driver in
            try await driver.origin.configure(path: "/f", headers: [("Cache-Control", "max-age=2, \(directive)")], body: "kept")
            _ = try await driver.roundTrip(id: 1, path: "/f")
            driver.clock.advance(by: 10)
            try await driver.origin.configure(path: "/f", drop: true)
            let answer = try await driver.roundTrip(id: 2, path: "/f")
            #expect(answer.body != "kept", "\(directive) in \(mode) mode was served stale: \(answer.raw)")
            #expect(answer.error != nil || answer.status == 502 || answer.status == 504, "\(answer.raw)")
        }
    }
}
