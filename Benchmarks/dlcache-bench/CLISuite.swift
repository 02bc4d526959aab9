import CacheTestSupport
import Foundation

/// `dlcache-bench cli`: the `dlcache` command as a shell script sees it — one process per request — against
/// nginx on 127.0.0.1 serving a 4 KB file.
///
/// - get_hit_cost_vs_curl: 100 `dlcache get -o /dev/null URL` processes, one after another, each answering
///   from the cache ÷ 100 `curl -s -o /dev/null URL` processes fetching the same file from nginx (goal ≤ 1.5).
///   Both include process start; both are launched the same way (posix_spawn, waited for in turn).
/// - startup_ms_version: mean milliseconds of `dlcache --version` (process start and exit, nothing opened),
///   beside `curl --version`'s in the detail.
/// Each figure is the median of 3 rounds.
enum CLISuite {
    static let processes = 100

    static func run() async throws -> [BenchResult] {
        let dlcache = try DriverSuite.dlcacheBinary()
        let origin = try BenchOrigin.nginx(bigPath: "/unused") { www in
            try Data((0..<4096).map { UInt8(truncatingIfNeeded: 32 + $0 % 90) }).write(to: www.appendingPathComponent("4k.html"))
        }
        defer { origin.stop() }
        let url = origin.url("/4k.html").absoluteString
        let scratch = try Bench.temporaryDirectory("cli")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let cacheDir = scratch.appendingPathComponent("cache").path
        // Stored with a lifetime so every later run is a fresh hit (nginx sends no Cache-Control).
        let fill = try run([dlcache.path, "get", "--cache-dir", cacheDir, "--expires-in", "3600", "-o", "/dev/null", url])
        guard fill == 0 else { throw BenchError(description: "dlcache get (fill) exited \(fill)") }
        let curl = try curlPath()

        var hits: [Double] = [], curls: [Double] = [], starts: [Double] = [], curlStarts: [Double] = []
        for _ in 0..<3 {
            hits.append(try timed(processes, [dlcache.path, "get", "--cache-dir", cacheDir, "-o", "/dev/null", url]))
            curls.append(try timed(processes, [curl, "-s", "-o", "/dev/null", url]))
            starts.append(try timed(processes, [dlcache.path, "--version"]))
            curlStarts.append(try timed(processes, [curl, "--version"]))
        }
        let hit = DriverSuite.median(hits), fetch = DriverSuite.median(curls)
        let start = DriverSuite.median(starts), curlStart = DriverSuite.median(curlStarts)
        let perMs = { (total: Double) in total / Double(processes) * 1000 }
        return [
            BenchResult(name: "get_hit_cost_vs_curl", value: hit / fetch, baseline: 1.5, unit: "x",
                        detail: String(format: "dlcache get from the cache %.1f ms per process vs curl fetching the 4 KB file from nginx %.1f ms: %d processes in turn, median of 3",
                                       perMs(hit), perMs(fetch), processes)),
            BenchResult(name: "startup_ms_version", value: perMs(start), baseline: nil, unit: "ms",
                        detail: String(format: "dlcache --version %.1f ms vs curl --version %.1f ms per process, median of 3",
                                       perMs(start), perMs(curlStart))),
        ]
    }

    /// curl's path (`/usr/bin/curl` when present, so no shim adds its own start-up time).
    static func curlPath() throws -> String {
        for candidate in ["/usr/bin/curl", "/usr/local/bin/curl"] where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw BenchError(description: "curl is not installed (Scripts/bootstrap.sh installs it)")
    }

    /// Runs `arguments` once; its exit status.
    static func run(_ arguments: [String]) throws -> Int32 {
        let child = try ChildProcess(arguments, stdout: .discard, stderr: .discard)
        return child.waitUntilExit().status
    }

    /// Seconds for `count` runs of `arguments`, one after another; fails on a non-zero exit.
    static func timed(_ count: Int, _ arguments: [String]) throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<count {
            let status = try run(arguments)
            guard status == 0 else { throw BenchError(description: "\(arguments.joined(separator: " ")) exited \(status)") }
        }
        return Bench.seconds(clock.now - start)
    }
}
