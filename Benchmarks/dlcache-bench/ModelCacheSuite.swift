import Foundation
import ModelCache

/// ModelCache benchmarks (issue 7): cached reads and writes of a 1,000-element model array, each measured
/// side by side with what apps do by hand (a JSON file decoded with `JSONDecoder`, written with
/// `JSONEncoder` + `Data.write(options: .atomic)`).
enum ModelCacheSuite {
    /// A typical list-screen model: a few strings, numbers, a date and tags (≈150 bytes of JSON each).
    struct Article: Codable, Sendable, Equatable, VersionedModel {
        static let modelVersion = 1
        var id: Int
        var title: String
        var summary: String
        var price: Double
        var isFavourite: Bool
        var tags: [String]
        var updatedAt: Date
    }

    static let elementCount = 1_000

    static func run() async throws -> [BenchResult] {
        let directory = try Bench.temporaryDirectory("modelcache")
        defer { try? FileManager.default.removeItem(at: directory) }
        let articles = (0..<elementCount).map { index in
            Article(id: index, title: "Article \(index)", summary: "A short summary of article number \(index).",
                    price: Double(index) * 0.99, isFavourite: index.isMultiple(of: 3),
                    tags: ["news", "tag\(index % 17)"], updatedAt: Date(timeIntervalSince1970: Double(index) * 60))
        }
        let json = try JSONEncoder().encode(articles)
        var results = try readResults(articles: articles, json: json, directory: directory)
        results.append(try writeResult(articles: articles, json: json, directory: directory))
        return results
    }

    /// `read_cost_vs_json_file` (memory tier on) and `read_cost_vs_json_file_disk` (memory tier off).
    private static func readResults(articles: [Article], json: Data, directory: URL) throws -> [BenchResult] {
        let fileURL = directory.appendingPathComponent("articles.json")
        try json.write(to: fileURL, options: .atomic)
        let readFile = {
            let decoded = try JSONDecoder().decode([Article].self, from: try Data(contentsOf: fileURL))
            try check(decoded.count)
        }

        let memoryCache = try makeCache(directory: directory, namespace: "bench-memory", memoryTier: true)
        try memoryCache.set(articles, forKey: "articles")
        let memory = try paired(oursIterations: 2_000, ours: {
            try check(memoryCache.value(forKey: "articles", as: [Article].self)?.value.count)
        }, baseline: readFile)

        let validatingCache = try makeCache(directory: directory, namespace: "bench-memory", memoryTier: true,
                                            validatesMemoryHits: true)
        let validated = try paired(oursIterations: 2_000, ours: {
            try check(validatingCache.value(forKey: "articles", as: [Article].self)?.value.count)
        }, baseline: readFile)

        let diskCache = try makeCache(directory: directory, namespace: "bench-disk", memoryTier: false)
        try diskCache.set(articles, forKey: "articles")
        let disk = try paired(oursIterations: 10, ours: {
            try check(diskCache.value(forKey: "articles", as: [Article].self)?.value.count)
        }, baseline: readFile)
        let sizes = "\(elementCount) elements, \(json.count) bytes of JSON"
        return [
            BenchResult(name: "read_cost_vs_json_file", value: memory.ratio, baseline: 0.01, unit: "x",
                        detail: "memory tier on: \(micro(memory.ours)) per read vs Data(contentsOf:)+JSONDecoder "
                            + "\(micro(memory.baseline)) (ratio \(String(format: "%.1e", memory.ratio))); with "
                            + "validatesMemoryHits \(micro(validated.ours)) (ratio \(String(format: "%.1e", validated.ratio))); "
                            + "\(sizes); lower is better, goal ≤ 0.01"),
            BenchResult(name: "read_cost_vs_json_file_disk", value: disk.ratio, baseline: 1.2, unit: "x",
                        detail: "memory tier off (SQLite lookup + body read + crc + metadata check + decode): "
                            + "\(micro(disk.ours)) vs \(micro(disk.baseline)); \(sizes); lower is better, goal ≤ 1.2"),
        ]
    }

    /// `write_cost_vs_atomic_json`: `set` (encode + fsync'd store) ÷ `JSONEncoder` + atomic `Data.write`.
    private static func writeResult(articles: [Article], json: Data, directory: URL) throws -> BenchResult {
        let fileURL = directory.appendingPathComponent("articles-written.json")
        let cache = try makeCache(directory: directory, namespace: "bench-write", memoryTier: true)
        var round = 0
        let write = try paired(oursIterations: 10, ours: {
            round += 1
            try cache.set(articles, forKey: "articles-\(round % 4)")
        }, baseline: {
            try JSONEncoder().encode(articles).write(to: fileURL, options: .atomic)
        })
        let ourWrite = write.ours, atomicWrite = write.baseline
        return BenchResult(name: "write_cost_vs_atomic_json", value: write.ratio, baseline: 2, unit: "x",
                           detail: "ModelCache.set \(micro(ourWrite)) (encode, metadata, tmp+fsync+rename, SQLite "
                               + "commit) vs JSONEncoder+Data.write(.atomic) \(micro(atomicWrite)) (no fsync); "
                               + "\(json.count) bytes; lower is better, goal ≤ 2")
    }

    /// Times `ours` and `baseline` in 9 alternating rounds (so machine load hits both alike); returns the
    /// median seconds per call of each and the median of the per-round ratios ours ÷ baseline.
    private static func paired(oursIterations: Int, baselineIterations: Int = 10, ours: () throws -> Void,
                               baseline: () throws -> Void) throws -> (ours: Double, baseline: Double, ratio: Double) {
        try ours()      // warm up both sides
        try baseline()
        var oursTimes: [Double] = [], baselineTimes: [Double] = [], ratios: [Double] = []
        for _ in 0..<9 {
            let b = try Bench.secondsPerCall(iterations: baselineIterations, rounds: 1, baseline)
            let o = try Bench.secondsPerCall(iterations: oursIterations, rounds: 1, ours)
            baselineTimes.append(b)
            oursTimes.append(o)
            ratios.append(o / b)
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        return (median(oursTimes), median(baselineTimes), median(ratios))
    }

    private static func makeCache(directory: URL, namespace: String, memoryTier: Bool,
                                  validatesMemoryHits: Bool = false) throws -> ModelCache {
        var configuration = ModelCache.Configuration(directory: directory)
        configuration.validatesMemoryHits = validatesMemoryHits
        configuration.namespace = namespace
        configuration.memoryPressureNotifications = []
        if !memoryTier { configuration.maxMemoryEntries = 0 }
        return try ModelCache(configuration: configuration)
    }

    private static func check(_ count: Int?) throws {
        guard count == elementCount else {
            throw BenchError(description: "modelcache: read returned \(count.map(String.init) ?? "nil") elements")
        }
    }

    private static func micro(_ seconds: Double) -> String {
        String(format: "%.1f µs", seconds * 1e6)
    }
}
