import CacheStore
import CacheTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Hidden `dlcache-bench store-child-writer <directory> <seed> [count]`: the child process of CacheStore's kill
/// tests. Opens the store in `<directory>` and writes entries in a loop, printing `ACK <i>` (unbuffered) after each
/// acknowledged write, until killed (or `count` writes). Entry `i` has key `k<i % 40>`, metadata `"<seed>:<i>"` and
/// the body `StoreChildWriter.body(seed:index:)`; every fifth write streams through a `BodyWriter`.
///
/// Two more modes for the store tests: `store-child-writer <directory> exit-while-held` writes `k0`…`k2`, reads
/// `k0` twice (a disk hit then a memory hit) and `absent` once, and calls `exit(0)` while a background thread
/// still holds the store (as a command-line tool whose background task has not let go yet); and
/// `store-child-writer <directory> read-only-probe` opens the store, prints `READONLY <true|false>`, `HIT <key>
/// <bytes>` or `MISS <key>` for `k0`…`k2`, then `WRITE ok` or `WRITE <error code>` for one write attempt (or
/// `OPEN-ERROR <code> <detail>` and exit 2 when it cannot open); and `store-child-writer <directory> concurrent`
/// (see ``concurrent(_:)``), for the group commit's kill test.
enum StoreChildWriter {
    static func main(_ arguments: [String]) -> Never {
        if arguments.count == 2, arguments[1] == "exit-while-held" { exitWhileHeld(arguments[0]) }
        if arguments.count == 2, arguments[1] == "read-only-probe" { readOnlyProbe(arguments[0]) }
        if arguments.count == 2, arguments[1] == "concurrent" { concurrent(arguments[0]) }
        guard arguments.count >= 2, let seed = Int(arguments[1]) else {
            FileHandle.standardError.write(Data("usage: dlcache-bench store-child-writer <dir> <seed> [count]\n".utf8))
            exit(64)
        }
        let limit = arguments.count > 2 ? Int(arguments[2]) ?? Int.max : Int.max
        var config = CacheStore.Configuration(directory: URL(fileURLWithPath: arguments[0]))
        config.maxDiskBytes = nil
        config.maxAge = nil
        config.logger = { _ in }
        let store: CacheStore
        do {
            store = try CacheStore(configuration: config)
        } catch {
            FileHandle.standardError.write(Data("child: open failed: \(error)\n".utf8))
            exit(2)
        }
        FileHandle.standardOutput.write(Data("READY\n".utf8))
        var index = 0
        while index < limit {
            let key = StoreKey(primary: "k\(index % 40)")
            let body = Self.body(seed: seed, index: index)
            let metadata = Data("\(seed):\(index)".utf8)
            do {
                if index % 5 == 4 {
                    let writer = try store.makeBodyWriter()
                    var offset = 0
                    while offset < body.count {
                        let end = min(body.count, offset + 7_000)
                        try writer.write(body.subdata(in: offset..<end))
                        offset = end
                    }
                    try store.commit(writer, metadata: metadata, for: key)
                } else {
                    try store.store(body, metadata: metadata, for: key)
                }
            } catch {
                FileHandle.standardError.write(Data("child: write \(index) failed: \(error)\n".utf8))
                exit(3)
            }
            FileHandle.standardOutput.write(Data("ACK \(index)\n".utf8))
            index += 1
        }
        exit(0)
    }

    /// Eight threads storing distinct keys `t<thread>-<i>` (bodies `body(seed: thread, index: i)`, every fourth
    /// one inline-sized) until killed, each printing `ACK <thread> <i>` once its store returned.
    static func concurrent(_ directory: String) -> Never {
        let store = openQuietly(directory)
        print("READY")
        fflush(nil)
        let output = Mutex<Void>(())
        // Eight threads of their own (`concurrentPerform` would run only as many at once as there are cores).
        for thread in 0..<8 {
            Thread {
                for i in 0..<100_000 {
                var body = Self.body(seed: thread, index: i)
                if i % 4 == 3 { body = body.prefix(100) }
                do {
                    try store.store(body, metadata: Data("\(thread):\(i)".utf8), for: StoreKey(primary: "t\(thread)-\(i)"))
                } catch {
                    FileHandle.standardError.write(Data("child: write \(thread) \(i) failed: \(error)\n".utf8))
                    exit(3)
                }
                output.withLock { _ in
                    FileHandle.standardOutput.write(Data("ACK \(thread) \(i)\n".utf8))
                }
                }
            }.start()
        }
        while true { sleep(60) }
    }

    static func openQuietly(_ directory: String) -> CacheStore {
        var config = CacheStore.Configuration(directory: URL(fileURLWithPath: directory))
        config.logger = { _ in }
        do {
            return try CacheStore(configuration: config)
        } catch {
            print("OPEN-ERROR \(codeName(error.code)) \(error.detail)")
            exit(2)
        }
    }

    static func exitWhileHeld(_ directory: String) -> Never {
        let store = openQuietly(directory)
        do {
            for i in 0..<3 { try store.store(body(seed: 9, index: i), metadata: Data("9:\(i)".utf8), for: StoreKey(primary: "k\(i)")) }
        } catch {
            print("WRITE-ERROR \(error)")
            exit(3)
        }
        _ = store.entry(for: StoreKey(primary: "k0"))
        _ = store.entry(for: StoreKey(primary: "k0"))
        _ = store.entry(for: StoreKey(primary: "absent"))
        let holder = Thread { withExtendedLifetime(store) { while true { sleep(60) } } }
        holder.start()
        print("EXITING")
        fflush(nil)
        exit(0)
    }

    static func readOnlyProbe(_ directory: String) -> Never {
        let store = openQuietly(directory)
        print("READONLY \(store.isReadOnly)")
        for i in 0..<3 {
            let key = StoreKey(primary: "k\(i)")
            if let entry = store.entry(for: key), entry.body == body(seed: 9, index: i) {
                print("HIT k\(i) \(entry.body.count)")
            } else {
                print("MISS k\(i)")
            }
        }
        do {
            try store.store(Data("x".utf8), metadata: Data(), for: StoreKey(primary: "new"))
            print("WRITE ok")
        } catch {
            print("WRITE \(codeName(error.code))")
        }
        fflush(nil)
        exit(0)
    }

    /// The deterministic body of write `index` by writer `seed` (``ChildWriterData/body(seed:index:)``, shared
    /// with the tests that check what the child wrote).
    static func body(seed: Int, index: Int) -> Data {
        ChildWriterData.body(seed: seed, index: index)
    }
}

/// `dlcache-bench store`: CacheStore against Foundation's URLCache, a locked dictionary and plain file reads.
/// Every figure is a ratio of two timings taken side by side in this run.
enum StoreSuite {
    static func run() async throws -> [BenchResult] {
        // STORE_BENCH_ONLY=memory,disk,... runs a subset (for profiling); the default runs everything.
        let only = ProcessInfo.processInfo.environment["STORE_BENCH_ONLY"].map { Set($0.split(separator: ",").map(String.init)) }
        func wanted(_ name: String) -> Bool { only?.contains(name) ?? true }
        var results: [BenchResult] = []
        if wanted("open") { results += try openAndResidentMemory() }
        if wanted("memory") { results += try memoryHits() }
        if wanted("disk") { results += try diskHits() }
        if wanted("urlcache") { results += try urlCacheDisk() }
        if wanted("inline") { results += try inlineCrossover() }
        if wanted("writes") { results += try writes() }
        return results
    }

    // MARK: write_cost_vs_file_write_16k, concurrent_writes_cost_vs_sequential

    /// Seconds to store `bodies` under distinct new keys in a fresh store, from `tasks` threads at once.
    static func storeAll(_ bodies: [Data], tasks: Int, durability: CacheStore.Durability = .processCrash) throws -> Double {
        let directory = try Bench.temporaryDirectory("store-writes")
        defer { try? FileManager.default.removeItem(at: directory) }
        var config = silentConfiguration(directory, memory: true)
        config.durability = durability
        let store = try CacheStore(configuration: config)
        defer { store.close() }
        let failures = Atomic<Int>(0)
        let clock = ContinuousClock()
        let start = clock.now
        let per = (bodies.count + tasks - 1) / tasks
        // One thread of its own per task: `concurrentPerform` would run only as many at once as there are cores.
        let group = DispatchGroup()
        for task in 0..<tasks {
            group.enter()
            Thread {
                defer { group.leave() }
                for i in (task * per)..<min(bodies.count, (task + 1) * per) {
                    do { try store.store(bodies[i], metadata: Data("m".utf8), for: StoreKey(primary: "w\(i)")) } catch {
                        failures.add(1, ordering: .relaxed)
                    }
                }
            }.start()
        }
        group.wait()
        let seconds = Bench.seconds(clock.now - start)
        guard failures.load(ordering: .relaxed) == 0 else { throw BenchError(description: "store writes failed") }
        return seconds
    }

    /// Seconds to write each of `bodies` to a new file in a fresh directory: open, one `write`, `close`; no fsync.
    static func writeFiles(_ bodies: [Data]) throws -> Double {
        let directory = try Bench.temporaryDirectory("file-writes")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ContinuousClock()
        let start = clock.now
        for (i, body) in bodies.enumerated() {
            let fd = open(directory.path + "/f\(i)", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw BenchError(description: "cannot create a file") }
            let written = body.withUnsafeBytes { raw in write(fd, raw.baseAddress, raw.count) }
            close(fd)
            guard written == body.count else { throw BenchError(description: "short write") }
        }
        return Bench.seconds(clock.now - start)
    }

    /// Storing 1,000 distinct 16 KB bodies vs writing 1,000 16 KB files, and 8 writers vs one (fresh directories
    /// each round, sides alternated, fastest of 3 rounds each).
    static func writes() throws -> [BenchResult] {
        let bodies = (0..<1_000).map { body(16_384, $0) }
        var store = Double.infinity, files = Double.infinity, concurrent = Double.infinity
        var sequential = Double.infinity, powerLoss = Double.infinity
        for _ in 0..<3 {
            files = min(files, try writeFiles(bodies))
            store = min(store, try storeAll(bodies, tasks: 1))
            concurrent = min(concurrent, try storeAll(bodies, tasks: 8))
        }
        sequential = store
        powerLoss = try storeAll(Array(bodies.prefix(200)), tasks: 1, durability: .powerLoss) * 5
        return [
            BenchResult(name: "write_cost_vs_file_write_16k", value: store / files, baseline: 2, unit: "x",
                        detail: String(format: "1,000 distinct 16 KB bodies stored %.0f ms vs 1,000 files written (open, write, close; no fsync) %.0f ms; durability .powerLoss (fsync per body): ≈%.0f ms",
                                       store * 1e3, files * 1e3, powerLoss * 1e3)),
            BenchResult(name: "concurrent_writes_cost_vs_sequential", value: concurrent / sequential, baseline: 0.6,
                        unit: "x",
                        detail: String(format: "the same 1,000 stores from 8 threads at once %.0f ms vs one after another %.0f ms",
                                       concurrent * 1e3, sequential * 1e3)),
        ]
    }

    static func silentConfiguration(_ directory: URL, memory: Bool) -> CacheStore.Configuration {
        var config = CacheStore.Configuration(directory: directory)
        config.logger = { _ in }
        config.maxDiskBytes = nil
        config.maxAge = nil
        if !memory { config.maxMemoryBytes = 0 }
        return config
    }

    static func body(_ size: Int, _ seed: Int) -> Data {
        var data = Data(count: size)
        data.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) in
            for i in stride(from: 0, to: size, by: 64) { raw[i] = UInt8(truncatingIfNeeded: seed &+ i) }
        }
        return data
    }

    /// Seconds per call of `a` and of `b`, timed in alternating rounds (so both see the same machine load) and
    /// taking each side's fastest round: on a shared, loaded machine the minimum is the least noisy estimate.
    static func paired(iterations: Int, rounds: Int = 9, _ a: () throws -> Void,
                       _ b: () throws -> Void) rethrows -> (Double, Double) {
        var bestA = Double.infinity
        var bestB = Double.infinity
        for _ in 0..<rounds {
            bestA = min(bestA, try Bench.secondsPerCall(iterations: iterations, rounds: 1, a))
            bestB = min(bestB, try Bench.secondsPerCall(iterations: iterations, rounds: 1, b))
        }
        return (bestA, bestB)
    }

    static func micro(_ seconds: Double) -> String { String(format: "%.2f µs", seconds * 1e6) }

    // MARK: open_100k_vs_1k, rss_mb_100k

    static func openAndResidentMemory() throws -> [BenchResult] {
        let dir = try Bench.temporaryDirectory("store-open")
        defer { try? FileManager.default.removeItem(at: dir) }
        func fill(_ namespace: String, _ count: Int) throws {
            var config = silentConfiguration(dir, memory: false)
            config.namespace = namespace
            let store = try CacheStore(configuration: config)
            for i in 0..<count {
                try store.store(body(200, i), metadata: Data(repeating: 7, count: 300),
                                for: StoreKey(primary: "GET https://example.com/item/\(i)"))
            }
        }
        try fill("small", 1_000)
        try fill("large", 100_000)
        // Times open + first hit; closing (an SQLite checkpoint with fsyncs) happens after the clock stops.
        func openAndHit(_ namespace: String) throws -> Double {
            var config = silentConfiguration(dir, memory: true)
            config.namespace = namespace
            let clock = ContinuousClock()
            var samples: [Double] = []
            for _ in 0..<15 {
                let start = clock.now
                let store = try CacheStore(configuration: config)
                guard store.entry(for: StoreKey(primary: "GET https://example.com/item/500")) != nil else {
                    throw BenchError(description: "open bench: entry missing")
                }
                samples.append(Bench.seconds(clock.now - start))
                withExtendedLifetime(store) {}
            }
            return samples.sorted()[samples.count / 2]
        }
        let small = try openAndHit("small")
        let large = try openAndHit("large")
        let before = Bench.residentMegabytes()
        var config = silentConfiguration(dir, memory: true)
        config.namespace = "large"
        let store = try CacheStore(configuration: config)
        var hits = 0
        for i in stride(from: 0, to: 100_000, by: 100) where store.entry(for: StoreKey(primary: "GET https://example.com/item/\(i)")) != nil {
            hits += 1
        }
        let after = Bench.residentMegabytes()
        let entries = store.statistics.entries
        return [
            BenchResult(name: "open_100k_vs_1k", value: large / small, baseline: 2, unit: "x",
                        detail: "open + first hit: \(String(format: "%.2f", large * 1e3)) ms at 100k entries vs "
                            + "\(String(format: "%.2f", small * 1e3)) ms at 1k"),
            BenchResult(name: "rss_mb_100k", value: after, baseline: nil, unit: "MB",
                        detail: "process RSS with a \(entries)-entry store open and \(hits) entries read "
                            + "(\(String(format: "%.1f", after - before)) MB more than before opening it)"),
        ]
    }

    // MARK: memory tier

    static func memoryHits() throws -> [BenchResult] {
        let dir = try Bench.temporaryDirectory("store-memory")
        defer { try? FileManager.default.removeItem(at: dir) }
        let count = 1_000
        let store = try CacheStore(configuration: silentConfiguration(dir, memory: true))
        let keys = (0..<count).map { StoreKey(primary: "GET https://example.com/r/\($0)") }
        let strings = keys.map(\.primary)
        let dictionary = Mutex<[String: Data]>([:])
        let urlCache = URLCache(memoryCapacity: 64 << 20, diskCapacity: 0, diskPath: nil)
        var requests: [URLRequest] = []
        for i in 0..<count {
            let data = body(1_024, i)
            try store.store(data, metadata: Data(repeating: 1, count: 200), for: keys[i])
            dictionary.withLock { $0[strings[i]] = data }
            let url = URL(string: "https://example.com/r/\(i)")!
            let request = URLRequest(url: url)
            let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                           headerFields: ["Cache-Control": "max-age=3600"])!
            urlCache.storeCachedResponse(CachedURLResponse(response: response, data: data), for: request)
            requests.append(request)
        }
        var sink = 0
        let (ours, dict) = try paired(iterations: 100_000) {
            guard let e = store.entry(for: keys[sink % count]) else { throw BenchError(description: "memory miss") }
            sink &+= e.body.count &+ 1
        } _: {
            let d = dictionary.withLock { $0[strings[sink % count]] }
            sink &+= (d?.count ?? 0) &+ 1
        }
        let (ours2, foundation) = try paired(iterations: 20_000) {
            guard let e = store.entry(for: keys[sink % count]) else { throw BenchError(description: "memory miss") }
            sink &+= e.body.count &+ 1
        } _: {
            let r = urlCache.cachedResponse(for: requests[sink % count])
            sink &+= (r?.data.count ?? 0) &+ 1
        }
        let stats = store.statistics
        guard stats.diskHits == 0 else { throw BenchError(description: "memory bench went to disk") }
        return [
            BenchResult(name: "memory_hit_speedup_vs_urlcache", value: foundation / ours2, baseline: 10, unit: "x",
                        detail: "URLCache.cachedResponse \(micro(foundation)) vs ours \(micro(ours2)), 1 KB, \(count) entries"),
            BenchResult(name: "memory_hit_cost_vs_dictionary", value: ours / dict, baseline: 1.5, unit: "x",
                        detail: "ours \(micro(ours)) vs Mutex<[String: Data]> lookup \(micro(dict))"),
        ]
    }

    // MARK: disk tier vs plain files

    static func readFile(_ path: String, _ size: Int) -> Data? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var data = Data(count: size)
        let ok = data.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) -> Bool in
            var offset = 0
            while offset < size {
                let n = read(fd, raw.baseAddress! + offset, size - offset)
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
        return ok ? data : nil
    }

    static func diskHits() throws -> [BenchResult] {
        var results: [BenchResult] = []
        // Goals (issue 14): an inline body read from SQLite at most as dear as open+read+close of a file; a 16 KB
        // blob within 15 % of it; larger blobs within 50 %.
        for (label, size, count, iterations, goal) in [("1k", 1 << 10, 500, 2_000, 1.0), ("16k", 16 << 10, 500, 1_000, 1.15),
                                                         ("256k", 256 << 10, 100, 200, 1.5), ("4m", 4 << 20, 10, 20, 1.5)] {
            let dir = try Bench.temporaryDirectory("store-disk-\(label)")
            defer { try? FileManager.default.removeItem(at: dir) }
            let store = try CacheStore(configuration: silentConfiguration(dir, memory: false))
            let plain = dir.appendingPathComponent("plain")
            try FileManager.default.createDirectory(at: plain, withIntermediateDirectories: true)
            let keys = (0..<count).map { StoreKey(primary: "GET https://example.com/\(label)/\($0)") }
            var paths: [String] = []
            for i in 0..<count {
                let data = body(size, i)
                try store.store(data, metadata: Data(repeating: 1, count: 200), for: keys[i])
                let path = plain.appendingPathComponent("\(i)").path
                try data.write(to: URL(fileURLWithPath: path))
                paths.append(path)
            }
            var sink = 0
            var i = 0
            let (ours, file) = try paired(iterations: iterations) {
                guard let e = store.entry(for: keys[i % count]) else { throw BenchError(description: "disk miss") }
                sink &+= e.body.count
                i += 1
            } _: {
                guard let d = readFile(paths[i % count], size) else { throw BenchError(description: "read failed") }
                sink &+= d.count
                i += 1
            }
            results.append(BenchResult(
                name: "disk_hit_cost_vs_file_read_\(label)", value: ours / file, baseline: goal,
                unit: "x", detail: "ours (memory tier off) \(micro(ours)) vs open+read+close \(micro(file)), \(count) entries"))
        }
        return results
    }

    // MARK: Foundation URLCache on disk, 1,000 entries

    static func urlCacheDisk() throws -> [BenchResult] {
        let dir = try Bench.temporaryDirectory("store-urlcache")
        defer { try? FileManager.default.removeItem(at: dir) }
        let count = 1_000
        let size = 4 << 10
        let urlCache = URLCache(memoryCapacity: 0, diskCapacity: 1 << 30,
                                diskPath: dir.appendingPathComponent("urlcache").path)
        let store = try CacheStore(configuration: silentConfiguration(dir, memory: false))
        var requests: [URLRequest] = []
        var keys: [StoreKey] = []
        var responses: [CachedURLResponse] = []
        for i in 0..<count {
            let url = URL(string: "https://example.com/d/\(i)")!
            requests.append(URLRequest(url: url))
            keys.append(StoreKey(primary: "GET \(url.absoluteString)"))
            let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                           headerFields: ["Cache-Control": "max-age=3600"])!
            responses.append(CachedURLResponse(response: response, data: body(size, i)))
        }
        // Fill both to count - 50 entries, then time the last 50 stores (each URL stored exactly once).
        let clock = ContinuousClock()
        for i in 0..<(count - 50) {
            urlCache.storeCachedResponse(responses[i], for: requests[i])
            try store.store(responses[i].data, metadata: Data(repeating: 1, count: 200), for: keys[i])
        }
        var start = clock.now
        for i in (count - 50)..<count { urlCache.storeCachedResponse(responses[i], for: requests[i]) }
        let foundationWrite = Bench.seconds(clock.now - start) / 50
        start = clock.now
        for i in (count - 50)..<count {
            try store.store(responses[i].data, metadata: Data(repeating: 1, count: 200), for: keys[i])
        }
        let ourWrite = Bench.seconds(clock.now - start) / 50
        var sink = 0
        var i = 0
        let foundationRead = Bench.secondsPerCall(iterations: 20, rounds: 3) {
            sink &+= urlCache.cachedResponse(for: requests[(i &* 37) % count])?.data.count ?? 0
            i += 1
        }
        let ourRead = try Bench.secondsPerCall(iterations: 2_000, rounds: 5) {
            guard let e = store.entry(for: keys[(i &* 37) % count]) else { throw BenchError(description: "miss") }
            sink &+= e.body.count
            i += 1
        }
        return [
            BenchResult(name: "disk_hit_speedup_vs_urlcache", value: foundationRead / ourRead, baseline: nil, unit: "x",
                        detail: "URLCache disk hit \(micro(foundationRead)) vs ours \(micro(ourRead)), 4 KB, 1,000 entries"),
            BenchResult(name: "write_speedup_vs_urlcache", value: foundationWrite / ourWrite, baseline: nil, unit: "x",
                        detail: "URLCache disk store \(micro(foundationWrite)) vs ours \(micro(ourWrite)), 4 KB (inline in the "
                            + "index, WAL synchronous=NORMAL), at 1,000 entries"),
        ]
    }

    // MARK: inline (in SQLite) vs file-backed bodies

    static func inlineCrossover() throws -> [BenchResult] {
        var results: [BenchResult] = []
        for size in [1 << 10, 4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10] {
            var timings: [Double] = []
            var writes: [Double] = []
            for inline in [true, false] {
                let dir = try Bench.temporaryDirectory("store-inline")
                defer { try? FileManager.default.removeItem(at: dir) }
                var config = silentConfiguration(dir, memory: false)
                config.inlineThreshold = inline ? 1 << 20 : 0
                let store = try CacheStore(configuration: config)
                let keys = (0..<300).map { StoreKey(primary: "k\($0)") }
                let clock = ContinuousClock()
                let start = clock.now
                for (n, key) in keys.enumerated() { try store.store(body(size, n), metadata: Data(), for: key) }
                writes.append(Bench.seconds(clock.now - start) / Double(keys.count))
                var i = 0
                var best = Double.infinity
                for _ in 0..<7 {
                    best = min(best, try Bench.secondsPerCall(iterations: 600, rounds: 1) {
                        guard store.entry(for: keys[i % keys.count]) != nil else { throw BenchError(description: "miss") }
                        i += 1
                    })
                }
                timings.append(best)
            }
            results.append(BenchResult(
                name: "inline_vs_file_read_\(size >> 10)k", value: timings[0] / timings[1], baseline: 1, unit: "x",
                detail: "disk hit inline \(micro(timings[0])) vs file \(micro(timings[1])); "
                    + "write inline \(micro(writes[0])) vs file \(micro(writes[1]))", isGoal: false))
        }
        return results
    }
}

/// The Swift name of a store error code (`permissionDenied`), for the probes' one-word output lines.
private func codeName(_ code: CacheStoreError.Code) -> String {
    let names: [(CacheStoreError.Code, String)] = [
        (.diskFull, "diskFull"), (.permissionDenied, "permissionDenied"), (.corruptIndex, "corruptIndex"), (.io, "io"),
        (.invalidNamespace, "invalidNamespace"), (.notFound, "notFound"), (.busy, "busy"),
        (.invalidArgument, "invalidArgument"), (.unsafeFile, "unsafeFile"),
    ]
    return names.first { $0.0 == code }?.1 ?? "\(code)"
}
