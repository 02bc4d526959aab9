import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import SharedTier
import Foundation
import Synchronization

/// Log lines a cache wrote, for tests that check what was said (and what never was, e.g. a password).
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    /// A log sink that appends here.
    var sink: @Sendable (String) -> Void { { line in self.lines.withLock { $0.append(line) } } }
    /// Every line so far.
    var all: [String] { lines.withLock { $0 } }
    /// Lines containing `text`.
    func matching(_ text: String) -> [String] { all.filter { $0.contains(text) } }
}

/// One test's fleet: a loopback origin, a redis-server of its own and any number of "machines" (caches on their
/// own directories) pointed at it.
struct Fleet: Sendable {
    let origin: OriginServer
    let redis: RedisServer
    let root: URL
    let log = LogLines()

    /// Starts the origin and a redis-server with `redisConfiguration` lines.
    static func make(redisConfiguration: [String] = [], controlUser: String? = nil,
                     controlPassword: String? = nil) throws -> Fleet {
        let origin = try OriginServer()
        let redis = try RedisServer(configuration: redisConfiguration, controlUser: controlUser,
                                    controlPassword: controlPassword)
        let root = FileManager.default.temporaryDirectory
            .appendingPathComponent("dlcache-fleet-\(UUID().uuidString)", isDirectory: true)
        return Fleet(origin: origin, redis: redis, root: root)
    }

    /// The shared-tier configuration for this fleet's Redis (or `url`), with test-friendly bounds.
    func tier(_ url: String? = nil, _ adjust: (inout SharedTierConfiguration) -> Void = { _ in }) throws -> SharedTierConfiguration {
        var tier = try SharedTierConfiguration.redis(url ?? redis.url)
        tier.timeout = 0.5
        tier.maxWait = 5
        adjust(&tier)
        return tier
    }

    /// A cache on its own directory (`name`), using `tier` as its shared tier.
    func machine(_ name: String, tier: SharedTierConfiguration?, namespace: String = "default",
                 mode: CacheMode = .private) throws -> DownloadCache {
        var configuration = DownloadCache.Configuration(directory: root.appendingPathComponent(name, isDirectory: true),
                                                        namespace: namespace)
        configuration.sharedTier = tier
        configuration.mode = mode
        configuration.log = log.sink
        return try DownloadCache(configuration: configuration)
    }

    /// GET `path` of the origin through `cache`.
    func get(_ cache: DownloadCache, _ path: String, headers: HTTPHeaders = HTTPHeaders()) async throws -> CachedResponse {
        try await cache.response(for: CacheRequest(url: origin.url(path), headers: headers))
    }

    /// Requests the origin counted for `path`.
    func originRequests(_ path: String) async throws -> Int {
        try await origin.hits(path).total
    }

    /// Stops the origin and Redis and deletes every machine's directory.
    func tearDown() {
        origin.stop()
        redis.stop()
        try? FileManager.default.removeItem(at: root)
    }
}

/// Runs `body` with a fresh fleet and always tears it down.
func withFleet(redisConfiguration: [String] = [], controlUser: String? = nil, controlPassword: String? = nil,
               _ body: (Fleet) async throws -> Void) async throws {
    // Starting python and redis-server waits for them to listen: done on a Dispatch thread, so the test pool's few
    // threads keep running other tests meanwhile.
    let fleet = try await offThePool {
        try Fleet.make(redisConfiguration: redisConfiguration, controlUser: controlUser, controlPassword: controlPassword)
    }
    do {
        try await body(fleet)
    } catch {
        await offThePool { fleet.tearDown() }
        throw error
    }
    await offThePool { fleet.tearDown() }
}

/// Runs blocking `work` (process start-up and shutdown) on a Dispatch thread instead of a test-pool thread.
func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}

/// Runs blocking `work` on a Dispatch thread instead of a test-pool thread.
func offThePool(_ work: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            work()
            continuation.resume()
        }
    }
}

/// The `dlcache` binary built next to the test bundle, if any (`swift build` builds it).
let dlcacheChildBinary: URL? = {
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
        Bundle.main.bundleURL.deletingLastPathComponent(),
        Bundle.main.bundleURL,
    ]
    return candidates.map { $0.appendingPathComponent("dlcache") }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }
}()

/// Runs `count` `dlcache` children at once with `arguments(index)`, each writing its body to its own file, and
/// waits (at most `timeout` seconds, sleeping between checks so no thread of the test pool is blocked) for all;
/// returns each child's exit status and body.
func runChildren(_ count: Int, binary: URL, environment: [String: String] = [:], timeout: TimeInterval = 60,
                 outputDirectory: URL, arguments: (Int) -> [String]) async throws -> [(status: Int32, body: Data)] {
    try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
    var children: [(ChildProcess, URL)] = []
    for index in 0..<count {
        let output = outputDirectory.appendingPathComponent("child-\(index).body")
        let child = try ChildProcess([binary.path] + arguments(index) + ["-o", output.path],
                                     environment: ChildProcess.environment(adding: environment), stdout: .discard)
        children.append((child, output))
    }
    let deadline = Date().addingTimeInterval(timeout)
    var results: [(status: Int32, body: Data)] = []
    for (child, output) in children {
        while child.termination == nil && Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        let status = child.termination?.status ?? -1
        child.killAndReap()
        results.append((status, (try? Data(contentsOf: output)) ?? Data()))
    }
    return results
}
