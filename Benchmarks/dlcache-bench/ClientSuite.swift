import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// `dlcache-bench client`: the caching client against a local origin (nginx when installed, else origin.py).
///
/// - cached_hit_speedup_vs_network: a 16 KB fetch from the origin through the client (reload policy) ÷ a hit.
/// - prefetch_cost_vs_urlsession_2000: prefetching 2,000 1 KB resources into an empty cache (default transport:
///   CurlTransport on Linux) ÷ plain URLSession downloading the same URLs (no cache), same concurrency (6); the
///   detail also gives the figure over URLSessionTransport.
/// - coalesced_origin_requests_1000: origin requests caused by 1,000 concurrent calls for one uncached URL
///   (origin.py, which counts hits, answering after 0.5 s).
/// - stream_2gb_peak_rss_mb: peak resident memory (VmHWM, reset first) while a 2 GiB body streams into the cache.
enum ClientSuite {
    static func run() async throws -> [BenchResult] {
        let origin = try BenchOrigin.start()
        defer { origin.stop() }
        // CLIENT_BENCH_ONLY=stream,hit,urlsession,curl,coalesce runs a subset (for profiling); the default runs all.
        let only = ProcessInfo.processInfo.environment["CLIENT_BENCH_ONLY"].map { Set($0.split(separator: ",").map(String.init)) }
        func wanted(_ name: String) -> Bool { only?.contains(name) ?? true }
        var results: [BenchResult] = []
        if wanted("stream") { results.append(try await streamPeakRSS(origin)) }
        if wanted("hit") { results.append(try await cachedHitSpeedup(origin)) }
        if wanted("urlsession") { results.append(try await prefetchCost(origin)) }
        if wanted("curl") { results.append(try await prefetchCostVsCurl(origin)) }
        if wanted("coalesce") { results.append(try await coalescedRequests()) }
        return results
    }

    static func makeCache(_ label: String, maxDiskBytes: Int64? = 1 << 30,
                          transport: (any HTTPTransport)? = nil) throws -> (DownloadCache, URL) {
        let directory = try Bench.temporaryDirectory(label)
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.maxDiskBytes = maxDiskBytes
        configuration.transport = transport
        configuration.log = { _ in }
        return (try DownloadCache(configuration: configuration), directory)
    }

    // MARK: cached_hit_speedup_vs_network

    static func cachedHitSpeedup(_ origin: BenchOrigin) async throws -> BenchResult {
        let (cache, directory) = try makeCache("client-hit")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = origin.url("/r16k")
        let request = CacheRequest(url: url)
        let reload = RequestOptions(policy: .reloadIgnoringLocalCacheData)
        for _ in 0..<20 { _ = try await cache.response(for: request, options: reload) }   // warm connections
        let rounds = 200
        let network = try await secondsPerAsyncCall(rounds) {
            let response = try await cache.response(for: request, options: reload)
            guard response.source == .network, response.bodySize == 16_384 else {
                throw BenchError(description: "expected a 16 KB network response, got \(response.source)")
            }
        }
        let noStore = RequestOptions(policy: .reloadIgnoringLocalCacheData, writeToCache: false)
        let networkOnly = try await secondsPerAsyncCall(rounds) {
            _ = try await cache.response(for: request, options: noStore)
        }
        let hit = try await secondsPerAsyncCall(rounds * 10) {
            let response = try await cache.response(for: request)
            guard response.source == .cache else { throw BenchError(description: "expected a cache hit") }
        }
        return BenchResult(name: "cached_hit_speedup_vs_network", value: network / hit, baseline: 10, unit: "x",
                           detail: String(format: "network fetch incl. storing (blob file) %.0f µs, cached hit %.1f µs (16 KB, %@); fetch without storing %.0f µs = %.0fx a hit",
                                          network * 1e6, hit * 1e6, origin.name, networkOnly * 1e6, networkOnly / hit))
    }

    /// Median seconds per call over 5 rounds of `count` sequential async calls.
    static func secondsPerAsyncCall(_ count: Int, _ body: () async throws -> Void) async throws -> Double {
        var samples: [Double] = []
        for _ in 0..<5 {
            let seconds = try await Bench.secondsAsync {
                for _ in 0..<count { try await body() }
            }
            samples.append(seconds / Double(count))
        }
        samples.sort()
        return samples[samples.count / 2]
    }

    // MARK: prefetch_cost_vs_urlsession_2000

    static func prefetchCost(_ origin: BenchOrigin) async throws -> BenchResult {
        let count = 2_000, width = 6
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpMaximumConnectionsPerHost = width
        let session = URLSession(configuration: configuration)
        func urls(_ run: Int) -> [URL] { (0..<count).map { origin.url("/p/\($0)?run=\(run)") } }
        var plainSamples: [Double] = [], cacheSamples: [Double] = [], sessionSamples: [Double] = []
        for run in 0..<3 {
            let plainURLs = urls(run * 2)
            plainSamples.append(try await Bench.secondsAsync {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    var next = 0
                    while next < plainURLs.count {
                        if next >= width { try await group.next() }
                        let url = plainURLs[next]
                        next += 1
                        group.addTask {
                            let (data, _) = try await session.data(for: URLRequest(url: url))
                            guard data.count == 1_024 else { throw BenchError(description: "short body") }
                        }
                    }
                    try await group.waitForAll()
                }
            })
            // The same through the cache over URLSessionTransport (the default transport off Linux).
            let (sessionCache, sessionDirectory) = try makeCache("client-prefetch-urlsession",
                                                                 transport: URLSessionTransport())
            defer { try? FileManager.default.removeItem(at: sessionDirectory) }
            let sessionURLs = (0..<count).map { origin.url("/p/\($0)?urlsession=\(run)") }
            sessionSamples.append(await Bench.secondsAsync { _ = await sessionCache.prefetch(sessionURLs, concurrency: width) })
            let (cache, directory) = try makeCache("client-prefetch")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cacheURLs = urls(run * 2 + 1)
            var report = PrefetchReport()
            cacheSamples.append(await Bench.secondsAsync {
                report = await cache.prefetch(cacheURLs, concurrency: width)
            })
            guard report.succeeded.count == count, report.fromNetwork == count else {
                throw BenchError(description: "prefetch: \(report.succeeded.count) ok, \(report.failed.count) failed")
            }
        }
        let plain = plainSamples.sorted()[1], cached = cacheSamples.sorted()[1]
        let overSession = sessionSamples.sorted()[1]
        return BenchResult(name: "prefetch_cost_vs_urlsession_2000", value: cached / plain, baseline: 1.1, unit: "x",
                           detail: String(format: "prefetch %.2f s (default transport) vs plain URLSession %.2f s (2,000 × 1 KB, concurrency 6, %@, median of 3); over URLSessionTransport %.2f s = %.2fx",
                                          cached, plain, origin.name, overSession, overSession / plain))
    }

    // MARK: prefetch_cost_vs_curl_parallel_2000

    /// Prefetching 2,000 1 KB resources into an empty cache (concurrency 6) ÷ `curl --parallel --parallel-max 6`
    /// fetching the same list to files; median of 5.
    ///
    /// Both sides create 2,000 files, so the protocol keeps the file system in the same state for each sample:
    /// before each one every dirty page is written out (``Bench/settleFileSystem()``), so no sample pays for the
    /// write-back of the one before; no sample's files are deleted until all samples ran (a file system without a
    /// journal, like ext4 here, skips inodes freed in the last few seconds — minutes while their inode table block
    /// is dirty — on every file it creates, so a sample run right after a deletion is slower); and the side that
    /// goes first alternates.
    static func prefetchCostVsCurl(_ origin: BenchOrigin) async throws -> BenchResult {
        let count = 2_000, width = 6, rounds = 5
        var curlSamples: [Double] = [], cacheSamples: [Double] = []
        var curlCPU = 0.0, cacheCPU = 0.0
        var leftovers: [URL] = []
        defer { for directory in leftovers { try? FileManager.default.removeItem(at: directory) } }
        var caches: [DownloadCache] = []
        for run in 0..<rounds {
            let curlURLs = (0..<count).map { origin.url("/p/\($0)?curl=\(run)").absoluteString }
            let scratch = try Bench.temporaryDirectory("client-curl")
            leftovers.append(scratch)
            var config = ""
            for (i, url) in curlURLs.enumerated() { config += "url = \"\(url)\"\noutput = \"\(scratch.path)/\(i)\"\n" }
            let configURL = scratch.appendingPathComponent("curl.config")
            try config.write(to: configURL, atomically: true, encoding: .utf8)
            let (cache, directory) = try makeCache("client-prefetch-curl")
            leftovers.append(directory)
            caches.append(cache)
            let cacheURLs = (0..<count).map { origin.url("/p/\($0)?prefetch=\(run)") }
            func runCurl() async throws {
                let curl = Process()
                curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                curl.arguments = ["curl", "--parallel", "--parallel-max", "\(width)", "-s", "-f", "-K", configURL.path]
                curl.standardOutput = FileHandle.nullDevice
                curl.standardError = FileHandle.nullDevice
                Bench.settleFileSystem()
                let cpuBefore = Bench.cpuSeconds(children: true)
                curlSamples.append(try await Bench.secondsAsync {
                    try curl.run()
                    curl.waitUntilExit()
                })
                curlCPU += Bench.cpuSeconds(children: true) - cpuBefore
                guard curl.terminationStatus == 0 else { throw BenchError(description: "curl --parallel failed") }
            }
            func runPrefetch() async throws {
                var report = PrefetchReport()
                Bench.settleFileSystem()
                let cpuBefore = Bench.cpuSeconds()
                cacheSamples.append(await Bench.secondsAsync { report = await cache.prefetch(cacheURLs, concurrency: width) })
                cacheCPU += Bench.cpuSeconds() - cpuBefore
                guard report.succeeded.count == count else {
                    throw BenchError(description: "prefetch: \(report.succeeded.count) ok, \(report.failed.count) failed")
                }
            }
            if run % 2 == 0 {
                try await runCurl()
                try await runPrefetch()
            } else {
                try await runPrefetch()
                try await runCurl()
            }
        }
        for cache in caches { await cache.close() }
        let curl = DriverSuite.median(curlSamples), cached = DriverSuite.median(cacheSamples)
        return BenchResult(name: "prefetch_cost_vs_curl_parallel_2000", value: cached / curl, baseline: 1.2, unit: "x",
                           detail: String(format: "prefetch %.2f s vs curl --parallel --parallel-max %d %.2f s (2,000 × 1 KB to files, %@, median of %d, sides alternated, dirty pages written out before each, no files deleted in between; all samples: prefetch %@ s, curl %@ s; CPU per request: prefetch %.0f µs, curl %.0f µs)",
                                          cached, width, curl, origin.name, rounds,
                                          samplesText(cacheSamples), samplesText(curlSamples),
                                          cacheCPU / Double(rounds * count) * 1e6, curlCPU / Double(rounds * count) * 1e6))
    }

    /// Samples in seconds as `0.41/0.39/…`.
    static func samplesText(_ samples: [Double]) -> String {
        samples.map { String(format: "%.2f", $0) }.joined(separator: "/")
    }

    // MARK: coalesced_origin_requests_1000

    static func coalescedRequests() async throws -> BenchResult {
        let origin = try OriginServer()
        defer { origin.stop() }
        try await origin.configure(path: "/one", headers: [("Cache-Control", "max-age=600")], size: 4_096, delay: 0.5)
        let (cache, directory) = try makeCache("client-coalesce")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = origin.url("/one")
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<1_000 { group.addTask { try await cache.response(for: CacheRequest(url: url)).status } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        guard statuses.count == 1_000, statuses.allSatisfy({ $0 == 200 }) else {
            throw BenchError(description: "coalescing: not every call got 200")
        }
        let hits = try await origin.hits("/one").total
        return BenchResult(name: "coalesced_origin_requests_1000", value: Double(hits), baseline: 1, unit: "requests",
                           detail: "1,000 concurrent calls for one uncached URL (origin.py answering after 0.5 s), all 200")
    }

    // MARK: stream_2gb_peak_rss_mb

    static func streamPeakRSS(_ origin: BenchOrigin) async throws -> BenchResult {
        let size: Int64 = 2 << 30
        let (cache, directory) = try makeCache("client-stream", maxDiskBytes: nil)
        defer { try? FileManager.default.removeItem(at: directory) }
        let before = Bench.residentMegabytes()
        resetPeakRSS()
        let seconds = try await Bench.secondsAsync {
            let response = try await cache.response(for: CacheRequest(url: origin.url(origin.bigPath)))
            guard response.bodySize == size, case .file = response.body else {
                throw BenchError(description: "2 GiB body: got \(response.bodySize) bytes")
            }
        }
        let peak = Bench.peakResidentMegabytes()
        return BenchResult(name: "stream_2gb_peak_rss_mb", value: peak, baseline: 100, unit: "MB",
                           detail: String(format: "peak RSS while 2 GiB streamed into the cache in %.1f s (RSS before %.0f MB, %@)",
                                          seconds, before, origin.name))
    }

    /// Resets the kernel's peak-RSS mark (VmHWM) for this process: `echo 5 > /proc/self/clear_refs`.
    static func resetPeakRSS() {
        if let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") {
            handle.write(Data("5".utf8))
            try? handle.close()
        }
    }
}

/// The benchmark origin: nginx with a generated config on a free port when installed, else origin.py.
final class BenchOrigin: Sendable {
    let name: String
    let baseURL: String
    let bigPath: String
    private let nginx: Process?
    private let python: OriginServer?
    private let root: URL?

    private init(name: String, baseURL: String, bigPath: String, nginx: Process?, python: OriginServer?, root: URL?) {
        self.name = name
        self.baseURL = baseURL
        self.bigPath = bigPath
        self.nginx = nginx
        self.python = python
        self.root = root
    }

    func url(_ path: String) -> URL { URL(string: baseURL + path) ?? URL(fileURLWithPath: "/") }

    static func start() throws -> BenchOrigin {
        for candidate in ["/usr/sbin/nginx", "/usr/bin/nginx"] where FileManager.default.isExecutableFile(atPath: candidate) {
            if let origin = try? startNginx(candidate) { return origin }
        }
        let python = try OriginServer()
        return BenchOrigin(name: "origin.py", baseURL: python.baseURL.absoluteString, bigPath: "/size/\(2 << 30)",
                           nginx: nil, python: python, root: nil)
    }

    func stop() {
        python?.stop()
        if let nginx, nginx.isRunning {
            nginx.terminate()
            nginx.waitUntilExit()
        }
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    /// Writes the document root (16 KB file, 2,000 × 1 KB files, a sparse 2 GiB file) and a config, runs nginx.
    private static func startNginx(_ binary: String) throws -> BenchOrigin {
        try startNginx(binary, bigPath: "/big") { www in
            try FileManager.default.createDirectory(at: www.appendingPathComponent("p"), withIntermediateDirectories: true)
            try Data(repeating: 0x61, count: 16_384).write(to: www.appendingPathComponent("r16k"))
            let small = Data(repeating: 0x62, count: 1_024)
            for i in 0..<2_000 { try small.write(to: www.appendingPathComponent("p/\(i)")) }
            try sparseFile(www.appendingPathComponent("big"), size: 2 << 30)
        }
    }

    /// The installed nginx serving a document root that `populate` writes (every file `max-age=3600`).
    /// - Parameter locations: extra `location` blocks for the server, given the document root's path.
    /// - Throws: ``BenchError`` when nginx is not installed or does not start.
    static func nginx(bigPath: String, locations: (URL) -> String = { _ in "" },
                      populate: (URL) throws -> Void) throws -> BenchOrigin {
        for candidate in ["/usr/sbin/nginx", "/usr/bin/nginx"] where FileManager.default.isExecutableFile(atPath: candidate) {
            return try startNginx(candidate, bigPath: bigPath, locations: locations, populate: populate)
        }
        throw BenchError(description: "nginx is not installed (Scripts/bootstrap.sh installs it)")
    }

    /// The document root directory of an nginx origin (`nil` for origin.py).
    var documentRoot: URL? { root?.appendingPathComponent("www") }

    /// Creates a sparse file of `size` bytes (reads as zeros).
    static func sparseFile(_ url: URL, size: UInt64) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: size)
        try handle.close()
    }

    /// Writes the document root with `populate` and a config, runs nginx on a free port.
    private static func startNginx(_ binary: String, bigPath: String, locations: (URL) -> String = { _ in "" },
                                   populate: (URL) throws -> Void) throws -> BenchOrigin {
        let root = try Bench.temporaryDirectory("nginx")
        let www = root.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: www, withIntermediateDirectories: true)
        try populate(www)
        let port = try LoopbackPort.free()
        let config = """
        worker_processes 1;
        daemon off;
        pid \(root.path)/nginx.pid;
        error_log \(root.path)/error.log warn;
        events { worker_connections 4096; }
        http {
            access_log off;
            client_body_temp_path \(root.path)/body;
            proxy_temp_path \(root.path)/proxy;
            fastcgi_temp_path \(root.path)/fastcgi;
            uwsgi_temp_path \(root.path)/uwsgi;
            scgi_temp_path \(root.path)/scgi;
            keepalive_requests 100000;
            sendfile on;
            server {
                listen 127.0.0.1:\(port);
                root \(www.path);
                location / { add_header Cache-Control "max-age=3600"; }
                \(locations(www))
            }
        }
        """
        let configURL = root.appendingPathComponent("nginx.conf")
        try config.write(to: configURL, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-p", root.path, "-c", configURL.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<200 {   // bounded: ≤ 2 s
            if LoopbackPort.accepts(port) {
                return BenchOrigin(name: "nginx", baseURL: "http://127.0.0.1:\(port)", bigPath: bigPath,
                                   nginx: process, python: nil, root: root)
            }
            if !process.isRunning { break }
            usleep(10_000)
        }
        process.terminate()
        try? FileManager.default.removeItem(at: root)
        throw BenchError(description: "nginx did not start")
    }
}
