import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import SharedTier
import Foundation

/// `dlcache-bench fleet`: many processes and many machines (the shared tier on a redis-server started here).
///
/// - shared_hit_cost_vs_origin_fetch: a local miss answered from Redis (and stored locally) ÷ the same 16 KB local
///   miss fetched from nginx (and stored locally); distinct URLs, fresh local caches, side by side. Goal ≤ 0.5.
/// - local_hit_cost_with_shared_tier: a local hit with Redis configured ÷ the same hit without. Goal ≤ 1.05.
/// - fleet_origin_requests_8_processes: origin requests when 8 `dlcache get` processes on 8 cache directories
///   (one Redis) ask at once for one slow URL (origin.py, answering after 1 s). Goal 1.
/// - cross_process_origin_requests_20: the same with 20 processes on one cache directory, no Redis. Goal 1.
enum FleetSuite {
    static func run() async throws -> [BenchResult] {
        guard RedisServer.isAvailable else { throw BenchError(description: "redis-server is not installed (Scripts/bootstrap.sh)") }
        let redis = try RedisServer()
        defer { redis.stop() }
        let origin = try BenchOrigin.start()
        defer { origin.stop() }
        var results: [BenchResult] = []
        results.append(try await sharedHitCost(origin, redis: redis))
        results.append(try await localHitCost(origin, redis: redis))
        results.append(try await processes(8, redis: redis))
        results.append(try await processes(20, redis: nil))
        return results
    }

    static func makeCache(_ label: String, redis: RedisServer?) throws -> (DownloadCache, URL) {
        let directory = try Bench.temporaryDirectory(label)
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.sharedTier = try redis.map { try SharedTierConfiguration.redis($0.url) }
        configuration.log = { _ in }
        return (try DownloadCache(configuration: configuration), directory)
    }

    // MARK: shared_hit_cost_vs_origin_fetch

    static func sharedHitCost(_ origin: BenchOrigin, redis: RedisServer) async throws -> BenchResult {
        let count = 200
        var fromRedis: [Double] = [], fromOrigin: [Double] = []
        for round in 0..<5 {
            let urls = (0..<count).map { origin.url("/r16k?fleet=\(round)-\($0)") }
            // Another machine fetched them first: Redis holds every one.
            let (writer, writerDirectory) = try makeCache("fleet-writer", redis: redis)
            defer { try? FileManager.default.removeItem(at: writerDirectory) }
            for url in urls { _ = try await writer.response(for: CacheRequest(url: url)) }
            let (plain, plainDirectory) = try makeCache("fleet-plain", redis: nil)
            defer { try? FileManager.default.removeItem(at: plainDirectory) }
            let (shared, sharedDirectory) = try makeCache("fleet-shared", redis: redis)
            defer { try? FileManager.default.removeItem(at: sharedDirectory) }
            _ = try await plain.response(for: CacheRequest(url: origin.url("/r16k?warm")))   // connections warm
            _ = try await shared.response(for: CacheRequest(url: origin.url("/r16k?warm")))
            fromOrigin.append(try await Bench.secondsAsync {
                for url in urls {
                    let response = try await plain.response(for: CacheRequest(url: url))
                    guard response.source == .network, response.bodySize == 16_384 else {
                        throw BenchError(description: "expected a 16 KB origin fetch")
                    }
                }
            } / Double(count))
            fromRedis.append(try await Bench.secondsAsync {
                for url in urls {
                    let response = try await shared.response(for: CacheRequest(url: url))
                    guard response.source == .cache, response.bodySize == 16_384 else {
                        throw BenchError(description: "expected a 16 KB answer from the shared tier, got \(response.source)")
                    }
                }
            } / Double(count))
            await shared.waitForBackgroundWork()   // its local fills, outside the timing (they would load the next round)
        }
        // The Redis round trip alone (lookup script, 16 KB value, framing checked), for the detail.
        let tier = SharedTier(configuration: try SharedTierConfiguration.redis(redis.url), scope: "private:default", log: { _ in })
        let primary = RFC9111.primaryKey(method: "GET", url: origin.url("/r16k?fleet=4-0"))
        _ = await tier.lookup(primary: primary)
        let lookup = try await Bench.secondsAsync {
            for _ in 0..<count {
                guard let found = await tier.lookup(primary: primary), found.entries.count == 1 else {
                    throw BenchError(description: "expected one shared entry")
                }
            }
        } / Double(count)
        let redisTime = median(fromRedis), originTime = median(fromOrigin)
        return BenchResult(name: "shared_hit_cost_vs_origin_fetch", value: redisTime / originTime, baseline: 0.5, unit: "x",
                           detail: String(format: "local miss from Redis %.0f µs vs from %@ %.0f µs (16 KB, median of 5 × %d; the Redis lookup alone %.0f µs)",
                                          redisTime * 1e6, origin.name, originTime * 1e6, count, lookup * 1e6))
    }

    // MARK: local_hit_cost_with_shared_tier

    static func localHitCost(_ origin: BenchOrigin, redis: RedisServer) async throws -> BenchResult {
        let (plain, plainDirectory) = try makeCache("fleet-hit-plain", redis: nil)
        defer { try? FileManager.default.removeItem(at: plainDirectory) }
        let (shared, sharedDirectory) = try makeCache("fleet-hit-shared", redis: redis)
        defer { try? FileManager.default.removeItem(at: sharedDirectory) }
        let request = CacheRequest(url: origin.url("/r16k?hit"))
        _ = try await plain.response(for: request)
        _ = try await shared.response(for: request)
        var with: [Double] = [], without: [Double] = []
        let calls = 200
        for round in 0..<41 {   // short interleaved rounds, alternating which side goes first: same machine load
            if round % 2 == 0 {
                without.append(try await hits(plain, request, calls))
                with.append(try await hits(shared, request, calls))
            } else {
                with.append(try await hits(shared, request, calls))
                without.append(try await hits(plain, request, calls))
            }
        }
        let withTime = median(with), withoutTime = median(without)
        return BenchResult(name: "local_hit_cost_with_shared_tier", value: withTime / withoutTime, baseline: 1.05, unit: "x",
                           detail: String(format: "local hit %.2f µs with Redis configured, %.2f µs without (16 KB, median of 41 interleaved rounds × %d)",
                                          withTime * 1e6, withoutTime * 1e6, calls))
    }

    private static func hits(_ cache: DownloadCache, _ request: CacheRequest, _ calls: Int) async throws -> Double {
        try await Bench.secondsAsync {
            for _ in 0..<calls {
                let response = try await cache.response(for: request)
                guard response.source == .cache else { throw BenchError(description: "expected a local hit") }
            }
        } / Double(calls)
    }

    // MARK: fleet_origin_requests_8_processes, cross_process_origin_requests_20

    /// `count` `dlcache get` processes at once for one slow URL: on their own cache directories sharing `redis`,
    /// or (no Redis) on one cache directory.
    static func processes(_ count: Int, redis: RedisServer?) async throws -> BenchResult {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("dlcache")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw BenchError(description: "dlcache is not built next to dlcache-bench (swift build)")
        }
        let origin = try OriginServer()
        defer { origin.stop() }
        let body = String(repeating: "one origin request ", count: 800)
        try await origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], body: body, delay: 1)
        let root = try Bench.temporaryDirectory("fleet-processes")
        defer { try? FileManager.default.removeItem(at: root) }
        var children: [(Process, URL)] = []
        for index in 0..<count {
            let output = root.appendingPathComponent("out-\(index)")
            let cacheDirectory = root.appendingPathComponent(redis == nil ? "cache" : "machine-\(index)")
            let child = Process()
            child.executableURL = binary
            child.arguments = ["get", origin.url("/slow").absoluteString, "--cache-dir", cacheDirectory.path, "-o", output.path]
                + (redis.map { ["--redis", $0.url] } ?? [])
            child.standardOutput = FileHandle.nullDevice
            child.standardError = FileHandle.nullDevice
            try child.run()
            children.append((child, output))
        }
        let deadline = Date().addingTimeInterval(120)
        for (child, _) in children {
            while child.isRunning && Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
            if child.isRunning { child.terminate() }
        }
        let exact = children.filter { (try? Data(contentsOf: $0.1)) == Data(body.utf8) }.count
        let requests = try await origin.hits("/slow").total
        let name = redis == nil ? "cross_process_origin_requests_20" : "fleet_origin_requests_8_processes"
        let setting = redis == nil ? "one cache directory, per-key lock" : "\(count) cache directories, one Redis"
        return BenchResult(name: name, value: Double(requests), baseline: 1, unit: "requests",
                           detail: "\(count) dlcache get processes at once for one URL answering after 1 s (\(setting)); "
                               + "\(exact) of \(count) got the exact bytes")
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}
