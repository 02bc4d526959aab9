import Foundation
import Testing
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
@testable import CacheCLI

/// End-to-end runs of `get`'s storage and policy options against the loopback origin.
@Suite(.serialized) struct GetOptionsTests {
    static func entries(_ cli: CLIHarness) async throws -> [[String: Any]] {
        try #require(try await cli.run(["ls", "--json"]).json() as? [[String: Any]])
    }

    @Test func noStoreLeavesTheCacheEmpty() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", "--no-store", origin.url("/size/50").absoluteString])
        #expect(run.code == 0)
        #expect(run.out.utf8.count == 50)
        #expect(try await Self.entries(cli).isEmpty)
    }

    @Test func noReadAlwaysAsksTheOrigin() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let url = origin.url("/size/60").absoluteString
        let first = await cli.run(["get", url])
        #expect(first.code == 0)
        let second = try await cli.run(["get", "--no-read", "--json", url]).object()
        #expect(second["source"] as? String == "network")
        #expect(try await origin.hits("/size/60").total == 2)
    }

    @Test func ignoreCacheControlStoresANoStoreResponse() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/ns", headers: [("Cache-Control", "no-store")], body: "secret")
        let url = origin.url("/ns").absoluteString
        let plain = await cli.run(["get", url])
        #expect(plain.code == 0)
        #expect(try await Self.entries(cli).isEmpty)
        let ignoring = await cli.run(["get", "--ignore-cache-control", "--expires-in", "60", url])
        #expect(ignoring.code == 0)
        #expect(try await Self.entries(cli).count == 1)
    }

    @Test func pinOptionPinsTheStoredEntry() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", "--pin", origin.url("/size/70").absoluteString])
        #expect(run.code == 0)
        #expect(try await Self.entries(cli).first?["pinned"] as? Bool == true)
    }

    @Test func maxTimeGivesUpOnASlowOrigin() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/slow", body: "late", delay: 3)
        let run = await cli.run(["get", "--max-time", "0.5", origin.url("/slow").absoluteString])
        #expect(run.code == 28)
        #expect(run.err.hasPrefix("Error: network error: timed out"))
    }

    @Test func returnCacheElseLoadServesStaleWithoutAsking() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/old", headers: [("Cache-Control", "max-age=0")], body: "old")
        let url = origin.url("/old").absoluteString
        let first = await cli.run(["get", url])
        #expect(first.code == 0)
        for policy in ["return-cache-else-load", "return-cache-dont-load", "only-load-if-not-cached", "dont-load"] {
            let run = await cli.run(["get", "--policy", policy, "--json", url])
            #expect(run.code == 0, "\(policy): \(run.err)")
            #expect(try run.object()["fresh"] as? Bool == false, "\(policy)")
        }
        #expect(try await origin.hits("/old").total == 1)
    }

    @Test func slidingExpiryRenewsOnEachHit() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let url = origin.url("/size/80").absoluteString
        let first = await cli.run(["get", "--expires-in", "120", "--sliding", url])
        #expect(first.code == 0)
        let info = try #require(try await cli.run(["info", "--json", url]).json() as? [[String: Any]])
        #expect(info.first?["slidingLifetime"] as? Int == 120)
        #expect(info.first?["expiresAt"] is String)
    }

    /// `--expires-in` and `--sliding` map to the request's ``CacheExpiration``.
    @Test(arguments: [
        ([], [:], CacheExpiration.server), ([], ["expires-in": ["60"]], .seconds(60)),
        (["sliding"], ["expires-in": ["60"]], .sliding(60)),
    ] as [([String], [String: [String]], CacheExpiration)])
    func expiryFlagsChooseTheExpiration(flags: [String], values: [String: [String]], expiration: CacheExpiration) throws {
        let parsed = ParsedArguments(flags: Set(flags), values: values, positionals: [])
        #expect(try GetCommand.requestOptions(parsed).expiration == expiration)
    }
}
