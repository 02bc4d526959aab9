import CacheTestSupport
import DownloadCache
import CacheStore
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
