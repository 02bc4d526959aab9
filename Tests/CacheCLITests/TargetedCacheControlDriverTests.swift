import Foundation
import Testing
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
@testable import CacheCLI

/// RFC 9213 through `dlcache driver`: in shared mode CDN-Cache-Control replaces Cache-Control and Expires by
/// default, in private mode it is ignored; `--targeted-field` sets the list; the field is forwarded unchanged.
@Suite(.serialized) struct TargetedCacheControlDriverTests {
    @Test func sharedModeObeysCDNCacheControlAndForwardsIt() async throws {
        try await withDriver(mode: .shared) { driver in
            try await driver.origin.configure(path: "/short", headers: [("Cache-Control", "max-age=3600"),
                                                                        ("CDN-Cache-Control", "max-age=1")], body: "x")
            let first = try await driver.roundTrip(id: 1, path: "/short")
            #expect(first.header("CDN-Cache-Control") == ["max-age=1"])
            try await driver.origin.configure(path: "/long", headers: [("Cache-Control", "no-store"),
                                                                       ("CDN-Cache-Control", "max-age=10000")], body: "y")
            _ = try await driver.roundTrip(id: 2, path: "/long")
            try await driver.origin.configure(path: "/private", headers: [("Cache-Control", "max-age=10000"),
                                                                          ("CDN-Cache-Control", "private")], body: "z")
            _ = try await driver.roundTrip(id: 3, path: "/private")
            try await driver.origin.configure(path: "/invalid", headers: [("Cache-Control", "no-store"),
                                                                          ("CDN-Cache-Control", "max-age=\"10000\"")], body: "w")
            _ = try await driver.roundTrip(id: 4, path: "/invalid")
            driver.clock.advance(by: 10)
            let cached = try await driver.roundTrip(id: 5, path: "/long")
            #expect(cached.header("CDN-Cache-Control") == ["max-age=10000"])
            for (id, path) in [(6, "/short"), (7, "/private"), (8, "/invalid")] {
                _ = try await driver.roundTrip(id: id, path: path)
            }
            #expect(try await driver.origin.hits("/short").total == 2)
            #expect(try await driver.origin.hits("/long").total == 1)
            #expect(try await driver.origin.hits("/private").total == 2)
            #expect(try await driver.origin.hits("/invalid").total == 2)
        }
    }

    @Test func privateModeIgnoresItByDefault() async throws {
        try await withDriver(mode: .private) { driver in
            try await driver.origin.configure(path: "/p", headers: [("Cache-Control", "max-age=3600"),
                                                                    ("CDN-Cache-Control", "max-age=1")], body: "x")
            _ = try await driver.roundTrip(id: 1, path: "/p")
            driver.clock.advance(by: 10)
            _ = try await driver.roundTrip(id: 2, path: "/p")
            #expect(try await driver.origin.hits("/p").total == 1)
        }
    }

    @Test func aConfiguredTargetListIsUsedInItsOrder() async throws {
        try await withDriver(mode: .private, configure: { $0.targetedFields = ["Edge-Cache-Control", "CDN-Cache-Control"] }) { driver in
            try await driver.origin.configure(path: "/e", headers: [("Cache-Control", "max-age=3600"),
                                                                    ("CDN-Cache-Control", "max-age=3600"),
                                                                    ("Edge-Cache-Control", "max-age=1")], body: "x")
            _ = try await driver.roundTrip(id: 1, path: "/e")
            driver.clock.advance(by: 10)
            _ = try await driver.roundTrip(id: 2, path: "/e")
            #expect(try await driver.origin.hits("/e").total == 2)
        }
    }

    @Test func targetedFieldOptionParses() throws {
        func targets(_ args: [String]) throws -> [String]? {
            let parsed = try ArgumentParser.parse(args, options: DriverCommand.options, positionals: DriverCommand.arguments)
            return try TargetedFieldOption.targets(parsed)
        }
        #expect(try targets([]) == nil)
        #expect(try targets(["--targeted-field", "Edge-Cache-Control", "--targeted-field", "CDN-Cache-Control"])
                == ["Edge-Cache-Control", "CDN-Cache-Control"])
        #expect(try targets(["--targeted-field", "none"]) == [])
        #expect(throws: UsageError.self) { try targets(["--targeted-field", "bad name"]) }
        let get = try ArgumentParser.parse(["--targeted-field", "X-CC", "http://a/"], options: GetCommand.options,
                                           positionals: GetCommand.arguments)
        #expect(try TargetedFieldOption.targets(get) == ["X-CC"])
    }
}
