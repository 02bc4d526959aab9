import CacheTestSupport
import Foundation
import Testing
@testable import CacheStore

/// Rows committed together that leave the store over a limit are followed by one sweep for the whole batch, run
/// before their callers resume and keeping every row of the batch — not one write transaction per caller. When
/// the batch alone is over the limit, each caller still sweeps as after a lone write, so the limit holds once
/// every call has returned.
@Suite struct ABatchOverALimitSweepsOnceForAllItsRowsTests {
    func makeStore(_ dir: TemporaryDirectory, clock: TestClock, log: LogSink, maxEntries: Int) throws -> CacheStore {
        var configuration = testConfiguration(dir, clock: clock, log: log)
        configuration.maxEntryCount = maxEntries
        return try CacheStore(configuration: configuration)
    }

    @Test func aBatchThatFillsAFullStoreSweepsOnceBeforeItsCallersResume() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        let log = LogSink()
        let store = try makeStore(dir, clock: clock, log: log, maxEntries: 64)
        defer { store.close() }
        try #require(store.generation.isShared, "the generation counts write transactions here")
        for i in 0..<60 {
            try store.store(bytes(100, seed: UInt8(i % 200)), metadata: Data(), for: StoreKey(primary: "old\(i)"))
            clock.advance(1)
        }
        clock.advance(60)
        let generation = store.generation.current
        let batches = store.commitQueue.batchesRun.load(ordering: .relaxed)
        let errors = try await StoresFromTasksCommitTogetherWithoutBlockingReadsTests.storeWhileTheIndexIsHeld(
            store, asyncBodies: (0..<20).map { bytes(100 + $0, seed: UInt8($0 + 1)) })
        #expect(errors.allSatisfy { $0 == nil }, "\(errors)")
        #expect(store.commitQueue.batchesRun.load(ordering: .relaxed) - batches == 1)
        // One bump for the batch, one for its sweep (a sweep per caller would be 21).
        #expect(store.generation.current - generation == 2, "\(store.generation.current - generation) write transactions")
        let trims = log.lines.filter { $0.contains("trimmed") }
        #expect(trims.count == 1 && trims.allSatisfy { $0.hasSuffix("trimmed 16 entries") }, "\(log.lines)")
        #expect(store.statistics.entries == 64)
        for i in 0..<20 { #expect(store.peekEntry(for: StoreKey(primary: "k\(i)"))?.body == bytes(100 + i, seed: UInt8(i + 1))) }
        for i in 0..<16 { #expect(store.peekEntry(for: StoreKey(primary: "old\(i)")) == nil, "old\(i), least recently used, stays") }
        for i in 16..<60 { #expect(store.peekEntry(for: StoreKey(primary: "old\(i)")) != nil, "old\(i) was evicted") }
        #expect(store.verify(repair: false).ok)
    }

    @Test func aBatchOfThreadsAndTasksSweepsOnceWhoeverRunsIt() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        let log = LogSink()
        let store = try makeStore(dir, clock: clock, log: log, maxEntries: 30)
        defer { store.close() }
        try #require(store.generation.isShared)
        for i in 0..<30 {
            try store.store(bytes(20_000, seed: UInt8(i + 100)), metadata: Data(), for: StoreKey(primary: "old\(i)"))
            clock.advance(1)
        }
        clock.advance(60)
        let generation = store.generation.current
        // Released together: a thread's synchronous batch or the commit writer runs all twelve rows.
        let errors = try await StoresFromTasksCommitTogetherWithoutBlockingReadsTests.storeWhileTheIndexIsHeld(
            store, asyncBodies: (0..<6).map { bytes(20_000, seed: UInt8($0 + 1)) },
            syncBodies: (0..<6).map { bytes(20_000, seed: UInt8($0 + 50)) })
        #expect(errors.allSatisfy { $0 == nil }, "\(errors)")
        #expect(store.generation.current - generation == 2, "\(store.generation.current - generation) write transactions")
        #expect(store.statistics.entries == 30)
        for i in 0..<12 { #expect(store.peekEntry(for: StoreKey(primary: "old\(i)")) == nil, "old\(i)") }
        for i in 0..<6 {
            #expect(store.peekEntry(for: StoreKey(primary: "k\(i)"))?.body == bytes(20_000, seed: UInt8(i + 1)))
            #expect(store.peekEntry(for: StoreKey(primary: "s\(i)"))?.body == bytes(20_000, seed: UInt8(i + 50)))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.files.blobsPath).count == 30)
        #expect(store.verify(repair: false).ok)
    }

    @Test func aBatchOverTheLimitByItselfEndsWithinItOnceEveryCallReturned() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        let log = LogSink()
        let store = try makeStore(dir, clock: clock, log: log, maxEntries: 5)
        defer { store.close() }
        let errors = try await StoresFromTasksCommitTogetherWithoutBlockingReadsTests.storeWhileTheIndexIsHeld(
            store, asyncBodies: (0..<20).map { bytes(300, seed: UInt8($0 + 1)) })
        #expect(errors.allSatisfy { $0 == nil }, "\(errors)")
        #expect(store.statistics.entries == 5)
        let left = (0..<20).filter { store.info(for: StoreKey(primary: "k\($0)")) != nil }
        #expect(left.count == 5, "\(left)")
        #expect(store.verify(repair: false).ok)
    }

    @Test func blobFilesOfRowsTheBatchSweptAreDeletedBeforeItsCallersResume() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        let log = LogSink()
        let store = try makeStore(dir, clock: clock, log: log, maxEntries: 10)
        defer { store.close() }
        for i in 0..<10 {
            try store.store(bytes(20_000, seed: UInt8(i + 100)), metadata: Data(), for: StoreKey(primary: "old\(i)"))
            clock.advance(1)
        }
        let errors = try await StoresFromTasksCommitTogetherWithoutBlockingReadsTests.storeWhileTheIndexIsHeld(
            store, asyncBodies: (0..<4).map { bytes(20_000, seed: UInt8($0 + 1)) })
        #expect(errors.allSatisfy { $0 == nil }, "\(errors)")
        let blobs = try FileManager.default.contentsOfDirectory(atPath: store.files.blobsPath)
        #expect(blobs.count == 10, "\(blobs.count) blob files for 10 entries")
        #expect(store.verify(repair: false).ok)
    }
}
