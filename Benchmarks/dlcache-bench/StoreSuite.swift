import CacheStore
import Foundation

/// Hidden `dlcache-bench store-child-writer <directory> <seed> [count]`: the child process of CacheStore's kill
/// tests. Opens the store in `<directory>` and writes entries in a loop, printing `ACK <i>` (unbuffered) after each
/// acknowledged write, until killed (or `count` writes). Entry `i` has key `k<i % 40>`, metadata `"<seed>:<i>"` and
/// the body `StoreChildWriter.body(seed:index:)`; every fifth write streams through a `BodyWriter`.
enum StoreChildWriter {
    static func main(_ arguments: [String]) -> Never {
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

    /// The deterministic body of write `index` by writer `seed`: 0–50,000 bytes (inline and file-backed sizes).
    static func body(seed: Int, index: Int) -> Data {
        let size = (index &* 7_919 &+ seed &* 104_729) % 50_000
        var data = Data(count: size)
        var x = UInt64(truncatingIfNeeded: seed &* 1_000_003 &+ index) | 1
        data.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) in
            for i in 0..<size {
                x ^= x << 13
                x ^= x >> 7
                x ^= x << 17
                raw[i] = UInt8(truncatingIfNeeded: x)
            }
        }
        return data
    }
}

// Placeholder until the Store suite is written (see its issue).
enum StoreSuite {
    static func run() async throws -> [BenchResult] {
        throw BenchError(description: "the Store suite is not built yet")
    }
}
