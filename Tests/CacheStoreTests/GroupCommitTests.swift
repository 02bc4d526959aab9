import CacheTestSupport
import Foundation
import Synchronization
import Testing
@testable import CacheStore

/// Concurrent stores share one index transaction (group commit): every acknowledged entry is there after a reopen
/// or a SIGKILL, a row that fails in a batch fails alone, and the limits still hold.
@Suite struct GroupCommitTests {
    /// Runs `writers` (one thread each) while this thread holds the index lock, until all `writers.count` commits
    /// wait in the queue (at most 10 s), then lets them go: the first to get the lock commits them as one batch.
    /// Writers that fail before enqueueing (`failsEarly`) are not waited for.
    static func runAsOneBatch(_ store: CacheStore, failsEarly: Int = 0,
                              _ writers: [@Sendable () throws -> Void]) throws -> [CacheStoreError?] {
        let results = Mutex<[Int: CacheStoreError]>([:])
        let group = DispatchGroup()
        try store.withIndex { (_: StoreIndex) throws(CacheStoreError) in
            for (i, writer) in writers.enumerated() {
                group.enter()
                Thread {
                    do { try writer() } catch { results.withLock { $0[i] = error as? CacheStoreError ?? CacheStoreError(.io, "\(error)") } }
                    group.leave()
                }.start()
            }
            let deadline = Date().addingTimeInterval(10)
            while store.commitQueue.count < writers.count - failsEarly, Date() < deadline { usleep(1_000) }
        }
        #expect(group.wait(timeout: .now() + 30) == .success, "the writers did not finish")
        let final = results.withLock { $0 }
        return writers.indices.map { final[$0] }
    }

    @Test func concurrentCommitsShareOneTransactionAndAreAllThereAfterAReopen() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let sizes = [100, 20_000, 5_000, 60_000, 0, 9_000, 40_000, 1]
        let batchesBefore: Int
        let batchesAfter: Int
        do {
            let store = try CacheStore(configuration: testConfiguration(dir))
            batchesBefore = store.commitQueue.batchesRun.load(ordering: .relaxed)
            let writers: [@Sendable () throws -> Void] = sizes.enumerated().map { i, size in
                { () throws in
                    if i % 3 == 2 {
                        let writer = try store.makeBodyWriter()
                        try writer.write(bytes(size, seed: UInt8(i + 1)))
                        try store.commit(writer, metadata: Data("m\(i)".utf8), for: StoreKey(primary: "k\(i)"))
                    } else {
                        try store.store(bytes(size, seed: UInt8(i + 1)), metadata: Data("m\(i)".utf8),
                                        for: StoreKey(primary: "k\(i)"))
                    }
                }
            }
            let errors = try Self.runAsOneBatch(store, writers)
            #expect(errors.allSatisfy { $0 == nil }, "\(errors)")
            batchesAfter = store.commitQueue.batchesRun.load(ordering: .relaxed)
            store.close()
        }
        #expect(batchesAfter - batchesBefore == 1, "the 8 waiting commits ran as \(batchesAfter - batchesBefore) transactions")
        let store = try CacheStore(configuration: testConfiguration(dir))
        for (i, size) in sizes.enumerated() {
            let entry = try #require(store.entry(for: StoreKey(primary: "k\(i)")), "k\(i) lost")
            #expect(entry.body == bytes(size, seed: UInt8(i + 1)))
            #expect(entry.info.metadata == Data("m\(i)".utf8))
        }
        #expect(store.statistics.entries == sizes.count)
        #expect(store.statistics.diskBytes == bytesOnDisk(store))
        let report = store.verify(repair: false)
        #expect(report.ok, "\(report.problems)")
    }

    @Test(arguments: [CacheStore.Durability.processCrash, .powerLoss])
    func aRowThatFailsInABatchFailsAloneAndKeepsItsPreviousEntry(durability: CacheStore.Durability) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let count = 8
        let rowsSeen = Atomic<Int>(0)
        let armed = Atomic<Bool>(false)
        var config = testConfiguration(dir)
        config.durability = durability
        config.faultInjection = { (name: String) throws(CacheStoreError) in
            // The third row the batch applies fails, after the earlier rows were applied in the same transaction.
            if name == "batch-row", armed.load(ordering: .relaxed), rowsSeen.add(1, ordering: .relaxed).newValue == 3 {
                throw CacheStoreError(.io, "injected fault in the batch")
            }
        }
        let store = try CacheStore(configuration: config)
        for i in 0..<count {
            try store.store(bytes(30_000, seed: 100), metadata: Data("old".utf8), for: StoreKey(primary: "k\(i)"))
        }
        armed.store(true, ordering: .relaxed)
        let writers: [@Sendable () throws -> Void] = (0..<count).map { i in
            { () throws in
                // Half inline, half file-backed: the failed one's new blob must not be left behind.
                try store.store(bytes(i % 2 == 0 ? 200 : 25_000, seed: UInt8(i + 1)), metadata: Data("new".utf8),
                                for: StoreKey(primary: "k\(i)"))
            }
        }
        let errors = try Self.runAsOneBatch(store, writers)
        #expect(errors.compactMap { $0 }.count == 1, "\(errors)")
        store.close()

        let reopened = try CacheStore(configuration: testConfiguration(dir))
        for i in 0..<count {
            let entry = try #require(reopened.entry(for: StoreKey(primary: "k\(i)")), "k\(i) lost")
            if errors[i] == nil {
                #expect(entry.body == bytes(i % 2 == 0 ? 200 : 25_000, seed: UInt8(i + 1)), "k\(i)")
                #expect(entry.info.metadata == Data("new".utf8))
            } else {
                #expect(entry.body == bytes(30_000, seed: 100), "the failed k\(i) must keep its previous entry")
                #expect(entry.info.metadata == Data("old".utf8))
            }
        }
        #expect(reopened.statistics.entries == count)
        #expect(reopened.statistics.diskBytes == bytesOnDisk(reopened))
        let report = reopened.verify(repair: false)
        #expect(report.ok, "\(report.problems)")
    }

    @Test func aCommitWhoseFileVanishedFailsWithoutTakingTheOthersDown() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let vanishing = try store.makeBodyWriter()
        try vanishing.write(bytes(40_000, seed: 9))
        #expect(unlink(vanishing.path) == 0)
        let writers: [@Sendable () throws -> Void] = (0..<6).map { i in
            { () throws in
                if i == 2 {
                    try store.commit(vanishing, metadata: Data(), for: StoreKey(primary: "gone"))
                } else {
                    try store.store(bytes(12_000, seed: UInt8(i + 1)), metadata: Data(), for: StoreKey(primary: "k\(i)"))
                }
            }
        }
        let errors = try Self.runAsOneBatch(store, failsEarly: 1, writers)
        #expect(errors[2]?.code == .notFound, "\(errors)")
        #expect(errors.enumerated().allSatisfy { $0.offset == 2 || $0.element == nil }, "\(errors)")
        #expect(store.info(for: StoreKey(primary: "gone")) == nil)
        for i in 0..<6 where i != 2 {
            #expect(store.entry(for: StoreKey(primary: "k\(i)"))?.body == bytes(12_000, seed: UInt8(i + 1)))
        }
        #expect(store.statistics.entries == 5)
        #expect(store.statistics.diskBytes == bytesOnDisk(store))
    }

    /// Synchronous writers sleep while another one runs a batch; a close meanwhile must still let every one of
    /// them return its row's outcome (committed by the leader's batch or by the close), none waiting forever.
    @Test func writersWaitingBehindABatchReturnWhenTheStoreCloses() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let results = Mutex<[Int: String]>([:])
        let group = DispatchGroup()
        let closer = DispatchGroup()
        try store.withIndex { (_: StoreIndex) throws(CacheStoreError) in
            for i in 0..<4 {
                group.enter()
                Thread {
                    do {
                        try store.store(bytes(20_000, seed: UInt8(i + 1)), metadata: Data(), for: StoreKey(primary: "k\(i)"))
                        results.withLock { $0[i] = "ok" }
                    } catch {
                        results.withLock { $0[i] = "\(error)" }
                    }
                    group.leave()
                }.start()
            }
            let deadline = Date().addingTimeInterval(10)
            while store.commitQueue.count < 4, Date() < deadline { usleep(1_000) }
            // The close waits for the index too: whichever of it and the leading writer gets it first runs the rows.
            closer.enter()
            Thread {
                store.close()
                closer.leave()
            }.start()
            usleep(20_000)
        }
        #expect(group.wait(timeout: .now() + 30) == .success, "a writer still waits")
        #expect(closer.wait(timeout: .now() + 30) == .success, "the close still waits")
        #expect(results.withLock { $0 } == [0: "ok", 1: "ok", 2: "ok", 3: "ok"])
        let reopened = try CacheStore(configuration: testConfiguration(dir))
        for i in 0..<4 {
            #expect(reopened.entry(for: StoreKey(primary: "k\(i)"))?.body == bytes(20_000, seed: UInt8(i + 1)))
        }
    }

    @Test(arguments: [CacheStore.Durability.processCrash, .powerLoss])
    func limitsHoldWhileEightThreadsStore(durability: CacheStore.Durability) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var config = testConfiguration(dir)
        config.durability = durability
        config.maxEntryCount = 40
        config.maxDiskBytes = 400_000
        let store = try CacheStore(configuration: config)
        let failures = Atomic<Int>(0)
        let group = DispatchGroup()
        for thread in 0..<8 {
            group.enter()
            Thread {
                defer { group.leave() }
                for i in 0..<40 {
                let size = (i % 3 == 0) ? 300 : 15_000
                do {
                    try store.store(bytes(size, seed: UInt8(thread + 1)), metadata: Data(),
                                    for: StoreKey(primary: "t\(thread)-\(i)"))
                } catch {
                    failures.add(1, ordering: .relaxed)
                }
                }
            }.start()
        }
        #expect(group.wait(timeout: .now() + 60) == .success, "the writers did not finish")
        #expect(failures.load(ordering: .relaxed) == 0)
        let stats = store.statistics
        #expect(stats.entries <= 40)
        #expect(stats.diskBytes <= 400_000)
        #expect(stats.entries == store.allEntries().count)
        #expect(stats.diskBytes == bytesOnDisk(store))
        let report = store.verify(repair: false)
        #expect(report.ok, "\(report.problems)")
    }

    @Test(.enabled(if: childWriterBinary != nil, "dlcache-bench is not built next to the tests: run `swift build` first"))
    func aProcessKilledWhileEightThreadsCommitKeepsEveryAcknowledgedEntry() throws {
        let binary = try #require(childWriterBinary)
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let child = try ChildProcess([binary.path, "store-child-writer", dir.url.path, "concurrent"])
        // Watchdog: whatever happens, the child dies within 20 seconds.
        DispatchQueue.global().asyncAfter(deadline: .now() + 20) { child.send(signal: SIGKILL) }
        var text = ""
        let reader = child.stdout ?? FileHandle.nullDevice
        while text.components(separatedBy: "ACK ").count - 1 < 300 {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        child.killAndReap()
        text += String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
        let acked: [(thread: Int, index: Int)] = text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 3, parts[0] == "ACK", let t = Int(parts[1]), let i = Int(parts[2]) else { return nil }
            return (t, i)
        }
        #expect(acked.count >= 300, "the child acknowledged only \(acked.count) writes")

        let store = try CacheStore(configuration: testConfiguration(dir))
        for (thread, index) in acked {
            let entry = try #require(store.entry(for: StoreKey(primary: "t\(thread)-\(index)")), "t\(thread)-\(index) lost")
            var body = ChildWriterData.body(seed: thread, index: index)
            if index % 4 == 3 { body = body.prefix(100) }
            #expect(entry.body == body, "t\(thread)-\(index)")
        }
        #expect(store.statistics.entries == store.allEntries().count)
        #expect(store.statistics.diskBytes == bytesOnDisk(store))
        #expect(BlobFiles.list(store.files.tmpPath).isEmpty)
        let report = store.verify(repair: false)
        #expect(report.ok, "\(report.problems)")
    }
}
