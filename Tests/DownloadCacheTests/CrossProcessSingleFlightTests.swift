import CacheTestSupport
import DownloadCache
@testable import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// Many `dlcache get` processes asking at once for one slow URL make one origin request: on one machine through
/// the per-key lock in the namespace, across machines (cache directories) through the shared tier's lock.
@Suite(.serialized, .enabled(if: dlcacheChildBinary != nil, "dlcache is not built next to the tests: run `swift build` first"))
struct CrossProcessSingleFlightTests {
    @Test func twentyProcessesOnOneCacheMakeOneOriginRequest() async throws {
        let binary = try #require(dlcacheChildBinary)
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-xproc-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try await origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")],
                                   body: String(repeating: "exact bytes ", count: 500), delay: 1.5)
        let url = origin.url("/slow").absoluteString
        let results = try await runChildren(20, binary: binary, outputDirectory: root.appendingPathComponent("out")) { _ in
            ["get", url, "--cache-dir", root.appendingPathComponent("cache").path]
        }
        #expect(results.allSatisfy { $0.status == 0 })
        #expect(results.allSatisfy { $0.body == Data(String(repeating: "exact bytes ", count: 500).utf8) })
        #expect(try await origin.hits("/slow").total == 1)
    }

    @Test func waitersFetchThemselvesWhenTheResponseIsNotStorable() async throws {
        let binary = try #require(dlcacheChildBinary)
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-xproc-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try await origin.configure(path: "/nostore", headers: [("Cache-Control", "no-store")], body: "fresh each time",
                                   delay: 0.5)
        let url = origin.url("/nostore").absoluteString
        let results = try await runChildren(4, binary: binary, outputDirectory: root.appendingPathComponent("out")) { _ in
            ["get", url, "--cache-dir", root.appendingPathComponent("cache").path]
        }
        #expect(results.allSatisfy { $0.status == 0 && $0.body == Data("fresh each time".utf8) })
        #expect(try await origin.hits("/nostore").total == 4)
    }

    /// A `dlcache get` process fetching one slow URL holds that key's lock; a GET of another URL in this process
    /// (one whose lock hash shares the low 8 bits, as a 256-bucket lock would have shared its bucket) goes to the
    /// origin at once and completes while the other process still fetches.
    @Test func aKeyHeldByAnotherProcessDoesNotDelayAnotherKey() async throws {
        let binary = try #require(dlcacheChildBinary)
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-xproc-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let cacheDirectory = root.appendingPathComponent("cache")
        try await origin.configure(path: "/held", headers: [("Cache-Control", "max-age=600")], body: "slow", delay: 20)
        let heldURL = origin.url("/held")
        let heldKey = RFC9111.primaryKey(method: "GET", url: heldURL)
        let low = KeyLockFile.hash(for: heldKey) & 0xff
        let otherPath = try #require((0..<100_000).lazy.map { "/other-\($0)" }.first {
            KeyLockFile.hash(for: RFC9111.primaryKey(method: "GET", url: origin.url($0))) & 0xff == low
        })
        try await origin.configure(path: otherPath, headers: [("Cache-Control", "max-age=600")], body: "other bytes")

        var configuration = DownloadCache.Configuration(directory: cacheDirectory)
        configuration.log = { _ in }
        let cache = try DownloadCache(configuration: configuration)
        let child = try ChildProcess([binary.path, "get", heldURL.absoluteString, "--cache-dir", cacheDirectory.path,
                                      "-o", root.appendingPathComponent("held.body").path], stdout: .discard)
        defer { child.killAndReap() }
        // Wait (bounded) until the child holds the slow URL's key.
        var childHolds = false
        for _ in 0..<1_000 where child.termination == nil {
            if case .timedOut = await cache.store.acquireKeyLock(heldKey, timeout: 0) {
                childHolds = true
                break
            }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        try #require(childHolds, "the child took the slow URL's lock")

        let other = try await cache.response(for: CacheRequest(url: origin.url(otherPath)))
        #expect(other.source == .network)
        #expect(try other.data() == Data("other bytes".utf8))
        #expect(child.termination == nil, "the other key's GET completed while the child still held its key")
        guard case .timedOut = await cache.store.acquireKeyLock(heldKey, timeout: 0) else {
            Issue.record("the child no longer held the slow URL's lock")
            await cache.close()
            return
        }
        await cache.close()
    }

    @Test(.enabled(if: RedisServer.isAvailable, "redis-server is not installed"))
    func eightProcessesOnEightCacheDirectoriesMakeOneOriginRequest() async throws {
        let binary = try #require(dlcacheChildBinary)
        try await withFleet { fleet in
            let body = String(repeating: "fleet bytes ", count: 700)
            try await fleet.origin.configure(path: "/fleet", headers: [("Cache-Control", "max-age=600")], body: body,
                                             delay: 1.5)
            let url = fleet.origin.url("/fleet").absoluteString
            let results = try await runChildren(8, binary: binary, environment: ["DLCACHE_REDIS": fleet.redis.url],
                                          outputDirectory: fleet.root.appendingPathComponent("out")) { index in
                ["get", url, "--cache-dir", fleet.root.appendingPathComponent("machine-\(index)").path]
            }
            #expect(results.allSatisfy { $0.status == 0 })
            #expect(results.allSatisfy { $0.body == Data(body.utf8) })
            #expect(try await fleet.originRequests("/fleet") == 1)
        }
    }
}
