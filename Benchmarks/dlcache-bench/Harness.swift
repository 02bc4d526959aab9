import Foundation

/// One benchmark figure: a ratio (or count) measured side by side with its baseline in the same run.
struct BenchResult: Sendable {
    /// Stable name, e.g. `memory_hit_speedup_vs_urlcache`.
    var name: String
    /// The figure itself (a ratio, a count or megabytes; see `unit`); NaN when there is no figure (the behaviour
    /// measured is not implemented): printed as "n/a", `null` in JSON.
    var value: Double
    /// The goal or reference the figure is judged against, if any (e.g. 10 for "≥ 10").
    var baseline: Double?
    /// `"x"` for ratios, `"requests"`, `"MB"`, ...
    var unit: String
    /// What was measured, in words (absolute times of both sides, sizes, counts).
    var detail: String

    /// Whether `baseline` is a goal the figure is judged against (false: only a reference, such as the
    /// inline-vs-file crossover's 1).
    var isGoal = true

    /// Whether the figure meets its goal: at least the goal for a speedup (`*_speedup_*`), at most it for
    /// everything else (costs, milliseconds, megabytes, counts); nil without a goal or a figure.
    var meetsGoal: Bool? {
        guard isGoal, let baseline, !value.isNaN else { return nil }
        return name.contains("speedup") ? value >= baseline : value <= baseline
    }
}

/// Timing helpers. Every figure a suite reports should be a ratio of two timings taken in the same run.
enum Bench {
    /// Seconds per call of `body`, the median of `rounds` rounds of `iterations` calls each.
    static func secondsPerCall(iterations: Int, rounds: Int = 5, _ body: () throws -> Void) rethrows -> Double {
        var samples: [Double] = []
        let clock = ContinuousClock()
        for _ in 0..<max(1, rounds) {
            let start = clock.now
            for _ in 0..<max(1, iterations) { try body() }
            let elapsed = clock.now - start
            samples.append(seconds(elapsed) / Double(max(1, iterations)))
        }
        samples.sort()
        return samples[samples.count / 2]
    }

    /// Seconds taken by one async call of `body`.
    static func secondsAsync(_ body: () async throws -> Void) async rethrows -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try await body()
        return seconds(clock.now - start)
    }

    /// A `Duration` as seconds.
    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    /// Current resident set size in megabytes (from /proc/self/statm), or 0 where unavailable.
    static func residentMegabytes() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let parts = text.split(separator: " ")
        guard parts.count > 1, let pages = Double(parts[1]) else { return 0 }
        return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
    }

    /// Peak resident set size in megabytes (VmHWM from /proc/self/status), or 0 where unavailable.
    static func peakResidentMegabytes() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let digits = line.split(separator: " ").compactMap { Double($0) }
            if let kb = digits.first { return kb / 1024 }
        }
        return 0
    }

    /// A fresh empty temporary directory.
    /// Writes out every dirty page (`sync(2)`, which returns once they are written), so a timed sample that
    /// creates files does not pay for the write-back of the sample before it. Called before each side of a
    /// comparison of the cache with files written by another program (the same for both sides).
    /// CPU seconds (user + system) used so far by this process (`RUSAGE_SELF`) or by its waited-for children
    /// (`RUSAGE_CHILDREN`).
    static func cpuSeconds(children: Bool = false) -> Double {
        var usage = rusage()
        #if os(Linux)
        _ = getrusage(__rusage_who_t(children ? RUSAGE_CHILDREN.rawValue : RUSAGE_SELF.rawValue), &usage)
        #else
        _ = getrusage(children ? RUSAGE_CHILDREN : RUSAGE_SELF, &usage)
        #endif
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    static func settleFileSystem() {
        sync()
    }

    static func temporaryDirectory(_ label: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("dlcache-bench-\(label)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// Prints results as a table (default) or as one JSON line `{"suite": ..., "results": [...]}`.
enum BenchReport {
    static func print(suite: String, results: [BenchResult], json: Bool) {
        if json {
            var items: [[String: Any]] = []
            for r in results {
                var item: [String: Any] = ["name": r.name, "unit": r.unit, "detail": r.detail]
                item["value"] = r.value.isNaN ? NSNull() : r.value
                item["baseline"] = r.baseline ?? NSNull()
                item["met"] = r.meetsGoal ?? NSNull()
                items.append(item)
            }
            let object: [String: Any] = ["suite": suite, "results": items]
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]),
               let line = String(data: data, encoding: .utf8) {
                Swift.print(line)
            }
            return
        }
        let nameWidth = max(4, results.map(\.name.count).max() ?? 4)
        Swift.print("suite: \(suite)")
        Swift.print(pad("name", nameWidth) + "  " + pad("value", 10) + "  " + pad("goal", 8) + "  " + pad("met", 7)
                    + "  detail")
        for r in results {
            let goal = r.baseline.map { format($0) } ?? "-"
            let met = r.meetsGoal.map { $0 ? "yes" : "NOT MET" } ?? "-"
            Swift.print(pad(r.name, nameWidth) + "  " + pad(format(r.value) + " " + r.unit, 10) + "  "
                        + pad(goal, 8) + "  " + pad(met, 7) + "  " + r.detail)
        }
    }

    static func format(_ v: Double) -> String {
        if v.isNaN { return "n/a" }
        if v == v.rounded() && abs(v) < 1e9 { return String(Int(v)) }
        return String(format: abs(v) >= 100 ? "%.0f" : (abs(v) >= 10 ? "%.1f" : "%.2f"), v)
    }

    private static func pad(_ s: String, _ n: Int) -> String {
        s.count >= n ? s : s + String(repeating: " ", count: n - s.count)
    }
}

/// Raised by a suite that cannot run here (e.g. a missing origin server).
struct BenchError: Error, CustomStringConvertible {
    var description: String
}
