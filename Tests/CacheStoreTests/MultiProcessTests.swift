import CacheTestSupport
import Foundation
import Testing
@testable import CacheStore

/// The `dlcache-bench` executable built next to this test bundle (`swift build` builds it; `.ci/run` does).
let childWriterBinary: URL? = {
    var candidates: [URL] = []
    if let first = CommandLine.arguments.first {
        var url = URL(fileURLWithPath: first).standardizedFileURL
        for _ in 0..<4 {
            url.deleteLastPathComponent()
            candidates.append(url.appendingPathComponent("dlcache-bench"))
        }
    }
    candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("dlcache-bench"))
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
}()

/// The body the child writer wrote for `(seed, index)` (the child's own generator, from CacheTestSupport).
func childBody(seed: Int, index: Int) -> Data {
    ChildWriterData.body(seed: seed, index: index)
}

/// `(seed, index)` of a child-written entry, from its metadata `"<seed>:<index>"`.
func childIdentity(_ info: EntryInfo) -> (seed: Int, index: Int)? {
    let parts = String(decoding: info.metadata, as: UTF8.self).split(separator: ":")
    guard parts.count == 2, let seed = Int(parts[0]), let index = Int(parts[1]) else { return nil }
    return (seed, index)
}

/// Runs the child writer on `directory` until it has acknowledged `acks` writes (or 20 s passed), SIGKILLs it
/// and returns every index it acknowledged.
func runAndKillChild(_ binary: URL, directory: URL, seed: Int, acks: Int,
                     whileRunning: () -> Void = {}) throws -> [Int] {
    let child = try ChildProcess([binary.path, "store-child-writer", directory.path, "\(seed)"])
    // Watchdog: whatever happens, the child dies within 20 seconds.
    DispatchQueue.global().asyncAfter(deadline: .now() + 20) { child.send(signal: SIGKILL) }
    var text = ""
    let reader = child.stdout ?? FileHandle.nullDevice
    while text.components(separatedBy: "ACK ").count - 1 < acks {
        let chunk = reader.availableData
        if chunk.isEmpty { break }
        text += String(decoding: chunk, as: UTF8.self)
        whileRunning()
    }
    child.killAndReap()
    text += String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
    return text.split(separator: "\n").compactMap { line in
        line.hasPrefix("ACK ") ? Int(line.dropFirst(4)) : nil
    }
}

@Suite(.serialized) struct MultiProcessTests {
    @Test(.enabled(if: childWriterBinary != nil, "dlcache-bench is not built next to the tests: run `swift build` first"))
    func aChildKilledMidWriteLosesNoAcknowledgedWrite() throws {
        let binary = try #require(childWriterBinary)
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        // What each key must hold: the identity of its last acknowledged (or observed) write.
        var expected: [String: (seed: Int, index: Int)] = [:]
        var generator = SystemRandomNumberGenerator()
        for round in 1...12 {
            let acked = try runAndKillChild(binary, directory: dir.url, seed: round,
                                            acks: Int.random(in: 1...40, using: &generator))
            #expect(!acked.isEmpty, "round \(round): the child acknowledged nothing")
            for index in acked { expected["k\(index % 40)"] = (round, index) }
            let inFlight = (acked.max() ?? -1) + 1

            let store = try CacheStore(configuration: testConfiguration(dir))
            for (primary, identity) in expected {
                let entry = try #require(store.entry(for: StoreKey(primary: primary)), "round \(round): \(primary) lost")
                let found = try #require(childIdentity(entry.info))
                let isAcked = found == identity
                let isInFlight = found.seed == round && found.index == inFlight && inFlight % 40 == Int(primary.dropFirst())!
                #expect(isAcked || isInFlight, "round \(round): \(primary) holds \(found), expected \(identity)")
                #expect(entry.body == childBody(seed: found.seed, index: found.index))
                expected[primary] = found
            }
            #expect(store.statistics.entries == store.allEntries().count)
            #expect(store.statistics.diskBytes == bytesOnDisk(store))
            #expect(BlobFiles.list(store.files.tmpPath).isEmpty)
            let report = store.verify(repair: false)
            #expect(report.ok, "round \(round): \(report.problems)")
        }
    }

    @Test(.enabled(if: childWriterBinary != nil, "dlcache-bench is not built next to the tests: run `swift build` first"))
    func twoProcessesWriteAndReadOneDirectory() throws {
        let binary = try #require(childWriterBinary)
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        var mine = 0
        var problems: [String] = []
        let acked = try runAndKillChild(binary, directory: dir.url, seed: 7, acks: 150) {
            // Interleaved with the child's writes: write our own keys, read them and the child's back.
            let key = StoreKey(primary: "parent-\(mine % 25)")
            do {
                try store.store(bytes(mine * 397 % 30_000, seed: UInt8(mine % 200)), metadata: Data("\(mine)".utf8), for: key)
            } catch {
                problems.append("parent write \(mine): \(error)")
            }
            if store.entry(for: key)?.body != bytes(mine * 397 % 30_000, seed: UInt8(mine % 200)) {
                problems.append("parent read \(mine)")
            }
            for k in 0..<40 {
                guard let entry = store.entry(for: StoreKey(primary: "k\(k)")) else { continue }
                if let id = childIdentity(entry.info), entry.body != childBody(seed: id.seed, index: id.index) {
                    problems.append("child entry k\(k) torn")
                }
            }
            mine += 1
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(acked.count >= 150)
        #expect(mine > 0)
        // Every acknowledged child write is visible to the parent's (still open) store, memory tier included.
        var last: [Int: Int] = [:]
        for index in acked { last[index % 40] = index }
        for (k, index) in last {
            let entry = try #require(store.entry(for: StoreKey(primary: "k\(k)")))
            let id = try #require(childIdentity(entry.info))
            #expect(id.index == index || id.index == (acked.max() ?? 0) + 1)
            #expect(entry.body == childBody(seed: id.seed, index: id.index))
        }
    }

    @Test(.enabled(if: childWriterBinary != nil, "dlcache-bench is not built next to the tests: run `swift build` first"))
    func aKilledChildsDebrisIsRecoveredOnlyByTheNextExclusiveOpen() throws {
        let binary = try #require(childWriterBinary)
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try CacheStore(configuration: testConfiguration(dir))
            let acked = try runAndKillChild(binary, directory: dir.url, seed: 3, acks: 60)
            #expect(acked.count >= 60)
            // While this store is open, a second opener must not run the destructive recovery.
            let second = try CacheStore(configuration: testConfiguration(dir))
            #expect(second.statistics.entries == store.statistics.entries)
        }
        let store = try CacheStore(configuration: testConfiguration(dir))
        #expect(store.statistics.diskBytes == bytesOnDisk(store))
        #expect(BlobFiles.list(store.files.tmpPath).isEmpty)
        #expect(BlobFiles.list(store.files.sessionsPath).isEmpty)  // the dead child's marker is gone; this store has not written
        #expect(store.verify(repair: false).ok)
    }
}
