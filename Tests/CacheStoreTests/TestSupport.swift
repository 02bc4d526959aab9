import CacheTestSupport
import Foundation
@testable import CacheStore

/// A fresh temporary directory for one test, deleted by `remove()`.
struct TemporaryDirectory {
    let url: URL

    init(_ label: String = #function) {
        let name = label.filter { $0.isLetter || $0.isNumber }
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("cachestore-\(name)-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// A clock tests move by hand.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        current = start
    }

    var now: Date {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    func advance(_ seconds: TimeInterval) {
        lock.lock()
        current += seconds
        lock.unlock()
    }
}

/// Collects log lines.
final class LogSink: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String] = []

    var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }

    func append(_ line: String) {
        lock.lock()
        storage.append(line)
        lock.unlock()
    }
}

/// A configuration with a fixed clock and a captured log.
func testConfiguration(_ dir: TemporaryDirectory, namespace: String = "default", clock: TestClock = TestClock(),
                       log: LogSink = LogSink()) -> CacheStore.Configuration {
    var c = CacheStore.Configuration(directory: dir.url, namespace: namespace)
    c.now = { clock.now }
    c.logger = { log.append($0) }
    return c
}

/// Deterministic bytes of a given size.
func bytes(_ count: Int, seed: UInt8 = 1) -> Data {
    var data = Data(count: count)
    data.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) in
        var x = UInt32(seed) &* 2_654_435_761 &+ 1
        for i in 0..<count {
            x = x &* 1_103_515_245 &+ 12_345
            raw[i] = UInt8(truncatingIfNeeded: x >> 16)
        }
    }
    return data
}

/// Sum of the sizes of the files in `<store>/blobs/` plus inline body sizes (from the index rows).
func bytesOnDisk(_ store: CacheStore) -> Int64 {
    let blobs = store.directoryURL.appendingPathComponent("blobs").path
    var total: Int64 = 0
    for name in (try? FileManager.default.contentsOfDirectory(atPath: blobs)) ?? [] {
        total += BlobFiles.fileSize(blobs + "/" + name) ?? 0
    }
    let inline = store.allEntries().filter { store.bodyFileURL(for: $0.key) == nil }.reduce(Int64(0)) { $0 + $1.bodySize }
    return total + inline
}

/// Every file and directory under `url` with its size and modification time (ns), for "nothing changed" checks.
func treeSnapshot(_ url: URL) -> [String: String] {
    var result: [String: String] = [:]
    let root = url.standardizedFileURL.path
    guard let walker = FileManager.default.enumerator(atPath: root) else { return result }
    while let relative = walker.nextObject() as? String {
        var info = stat()
        guard lstat(root + "/" + relative, &info) == 0 else { continue }
        result[relative] = "\(info.st_mode) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
    }
    return result
}

/// Runs `binary` with `arguments` (through `setpriv` as uid/gid 65534 when `asNobody`), waits at most 60 s, and
/// returns its exit status and standard output.
func runChild(_ binary: URL, _ arguments: [String], asNobody: Bool = false) throws -> (status: Int32, output: String) {
    let command = asNobody
        ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", binary.path] + arguments
        : [binary.path] + arguments
    let outcome = try ChildProcess.runBlocking(command, timeout: .seconds(60))
    return (outcome.status, outcome.output)
}
