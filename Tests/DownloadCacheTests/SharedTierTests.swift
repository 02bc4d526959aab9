import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// Two cache directories as two machines sharing one Redis: what is shared, through which keys, and what never is.
@Suite(.serialized, .enabled(if: RedisServer.isAvailable, "redis-server is not installed (Scripts/bootstrap.sh installs it)"))
struct SharedTierTests {
    @Test func secondMachineIsServedFromRedisWithoutAnyOriginRequest() async throws {
        try await withFleet { fleet in
            try await fleet.origin.configure(path: "/a", headers: [("Cache-Control", "max-age=600")], body: "shared body")
            let tier = try fleet.tier()
            let first = try fleet.machine("one", tier: tier)
            let second = try fleet.machine("two", tier: tier)
            let fetched = try await fleet.get(first, "/a")
            #expect(fetched.source == .network)
            #expect(try await fleet.originRequests("/a") == 1)
            let shared = try await fleet.get(second, "/a")
            #expect(shared.text == "shared body")
            #expect(shared.source == .cache)
            #expect(shared.reason.contains("shared tier"))
            #expect(try await fleet.originRequests("/a") == 1)
            // The shared hit filled the second machine's local store (in the background): the next call is local.
            await second.waitForBackgroundWork()
            #expect(second.store.variants(forPrimaryKey: RFC9111.primaryKey(method: "GET", url: fleet.origin.url("/a"))).count == 1)
            #expect(second.sharedTierStatistics?.hits == 1)
            #expect(try fleet.redis.keys().allSatisfy { $0.hasPrefix("dlcache:private:default:{") })
        }
    }

    @Test func aMissCountsNoLocalHitAndASharedHitCarriesItsTTL() async throws {
        try await withFleet { fleet in
            try await fleet.origin.configure(path: "/t", headers: [("Cache-Control", "max-age=600")], body: "ttl body")
            let tier = try fleet.tier()
            let first = try fleet.machine("one", tier: tier)
            let second = try fleet.machine("two", tier: tier)
            let fetchedAt = Date()
            let fetched = try await fleet.get(first, "/t")
            #expect(fetched.source == .network)
            // Writing the response through to Redis reads it back without counting a use of it.
            await first.waitForBackgroundWork()
            let counts = first.store.statistics
            #expect(counts.memoryHits == 0 && counts.diskHits == 0)
            #expect(try fleet.redis.keys().contains { $0.hasSuffix(":e") })
            let shared = try await fleet.get(second, "/t")
            #expect(shared.source == .cache && shared.cacheStatus.hit)
            // The shared hit's TTL is the freshness lifetime minus the current age carried through Redis: 600 less
            // the seconds since the fetch, however long a loaded machine took between the two calls.
            let ttl = try #require(shared.cacheStatus.ttl)
            let elapsed = Int(Date().timeIntervalSince(fetchedAt).rounded(.up))
            #expect(ttl >= 600 - elapsed - 1 && ttl <= 600)
            #expect(shared.cacheStatus.detail == "shared tier")
            #expect(try await fleet.originRequests("/t") == 1)
        }
    }

    @Test func theREADMEConfigurationSharesEntries() async throws {
        try await withFleet { fleet in
            try await fleet.origin.configure(path: "/r", headers: [("Cache-Control", "public, max-age=600")], body: "r")
            var caches: [DownloadCache] = []
            for name in ["one", "two"] {
                var configuration = DownloadCache.Configuration(directory: fleet.root.appendingPathComponent(name),
                                                                namespace: "api")
                configuration.mode = .shared
                configuration.sharedTier = try .redis(fleet.redis.url)
                configuration.log = { _ in }
                caches.append(try DownloadCache(configuration: configuration))
            }
            for cache in caches { #expect(try await fleet.get(cache, "/r").text == "r") }
            #expect(try await fleet.originRequests("/r") == 1)
        }
    }

    @Test func namespacesAndModesNeverReadEachOther() async throws {
        try await withFleet { fleet in
            try await fleet.origin.configure(path: "/n", headers: [("Cache-Control", "public, max-age=600")], body: "n")
            let tier = try fleet.tier()
            _ = try await fleet.get(try fleet.machine("one", tier: tier, namespace: "alpha"), "/n")
            _ = try await fleet.get(try fleet.machine("two", tier: tier, namespace: "beta"), "/n")
            #expect(try await fleet.originRequests("/n") == 2)
            _ = try await fleet.get(try fleet.machine("three", tier: tier, namespace: "alpha", mode: .shared), "/n")
            #expect(try await fleet.originRequests("/n") == 3)
            _ = try await fleet.get(try fleet.machine("four", tier: tier, namespace: "alpha"), "/n")
            #expect(try await fleet.originRequests("/n") == 3)   // same namespace and mode as "one": shared
            let keys = try fleet.redis.keys()
            #expect(keys.filter { $0.hasPrefix("dlcache:private:alpha:") }.count == 1)
            #expect(keys.filter { $0.hasPrefix("dlcache:private:beta:") }.count == 1)
            #expect(keys.filter { $0.hasPrefix("dlcache:shared:alpha:") }.count == 1)
        }
    }

    @Test func sharedModeKeepsWhatASharedCacheMayNotStoreOutOfRedis() async throws {
        try await withFleet { fleet in
            try await fleet.origin.configure(path: "/private", headers: [("Cache-Control", "private, max-age=600")], body: "mine")
            try await fleet.origin.configure(path: "/auth", headers: [("Cache-Control", "max-age=600")], body: "secret")
            let tier = try fleet.tier()
            let first = try fleet.machine("one", tier: tier, mode: .shared)
            _ = try await fleet.get(first, "/private")
            _ = try await fleet.get(first, "/auth", headers: HTTPHeaders([("Authorization", "Bearer t")]))
            #expect(try fleet.redis.keys().isEmpty)
            // A private-mode machine stores the private response for its own namespace only.
            let privateMachine = try fleet.machine("two", tier: tier)
            _ = try await fleet.get(privateMachine, "/private")
            #expect(try fleet.redis.keys().count == 1)
            _ = try await fleet.get(try fleet.machine("three", tier: tier, mode: .shared), "/private")
            #expect(try await fleet.originRequests("/private") == 3)
        }
    }

    @Test func unsafeMethodInvalidatesTheSharedEntry() async throws {
        try await withFleet { fleet in
            try await fleet.origin.configure(path: "/doc", headers: [("Cache-Control", "max-age=600")], body: "v1")
            let tier = try fleet.tier()
            let first = try fleet.machine("one", tier: tier)
            _ = try await fleet.get(first, "/doc")
            #expect(try fleet.redis.keys().count == 1)
            _ = try await first.response(for: CacheRequest(method: "POST", url: fleet.origin.url("/doc")))
            #expect(try fleet.redis.keys().isEmpty)
            _ = try await fleet.get(try fleet.machine("two", tier: tier), "/doc")
            #expect(try await fleet.originRequests("/doc") == 3)   // GET, POST, and the second machine's GET
        }
    }

    @Test func bodiesAboveTheLimitStayLocal() async throws {
        try await withFleet { fleet in
            let tier = try fleet.tier { $0.maxBodyBytes = 4_096 }
            _ = try await fleet.get(try fleet.machine("one", tier: tier), "/size/10000")
            _ = try await fleet.get(try fleet.machine("two", tier: tier), "/size/4096")
            #expect(try fleet.redis.keys().count == 1)   // only the 4 KiB body
            let big = try await fleet.get(try fleet.machine("three", tier: tier), "/size/10000")
            #expect(big.bodySize == 10_000)
            #expect(try await fleet.originRequests("/size/10000") == 2)
        }
    }

    @Test func aFresheningWritesThroughSoOtherMachinesSeeTheNewLifetime() async throws {
        try await withFleet { fleet in
            try await fleet.origin.configure(path: "/v", headers: [("Cache-Control", "max-age=0, must-revalidate")],
                                             body: "validated", etag: "\"e1\"")
            let tier = try fleet.tier()
            let first = try fleet.machine("one", tier: tier)
            _ = try await fleet.get(first, "/v")
            try await fleet.origin.configure(path: "/v", headers: [("Cache-Control", "max-age=600")], body: "validated",
                                             etag: "\"e1\"")
            let revalidated = try await fleet.get(first, "/v")
            #expect(revalidated.source == .revalidated)
            let second = try await fleet.get(try fleet.machine("two", tier: tier), "/v")
            #expect(second.text == "validated")
            #expect(second.source == .cache)
            #expect(try await fleet.origin.hits("/v").total == 2)
        }
    }
}
