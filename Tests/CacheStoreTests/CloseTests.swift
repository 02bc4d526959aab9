import Foundation
import Testing
@testable import CacheStore

/// `close()`, the lock release, and the `exit()` handler: a store that is done with leaves no marker and no lock
/// behind, so the next opener runs the open-time cleanup and sees a clean shutdown.
@Suite struct CloseTests {
    /// A child process spawned while a store is open shares its lock's open file description until its `exec`
    /// closes the inherited descriptor (`O_CLOEXEC`). On a loaded machine that window is long; a store that only
    /// `close`d its descriptor left the lock held through the child's copy, the next open was not exclusive and
    /// session entries survived the reopen (CacheStoreLimitsTests.sessionEntriesAreGoneAfterReopenAndClearSession
    /// failed in CI that way). `dup` makes such a copy deterministically.
    @Test(arguments: [true, false])  // closed explicitly, or by deinit
    func aCopyOfTheLockDescriptorDoesNotKeepTheNamespaceLocked(explicitClose: Bool) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let log = LogSink()
        var inherited: Int32 = -1
        do {
            let store = try CacheStore(configuration: testConfiguration(dir, log: log))
            try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "s"), storageClass: .session)
            try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "p"))
            inherited = dup(store.lockFD)  // what a child between fork and exec holds
            if explicitClose { store.close() }
        }
        defer { close(inherited) }
        #expect(inherited >= 0)
        let probe = open(dir.url.appendingPathComponent("default/lock").path, O_RDWR | O_CLOEXEC)
        defer { close(probe) }
        #expect(flock(probe, LOCK_EX | LOCK_NB) == 0, "the namespace is still locked through the copy")
        flock(probe, LOCK_UN)
        let store = try CacheStore(configuration: testConfiguration(dir, log: log))
        #expect(store.allEntries().map(\.key.primary) == ["p"])
        #expect(!log.lines.contains { $0.contains("unclean") })
    }

    @Test func closeReleasesEverythingWhileTheStoreIsStillReferenced() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let log = LogSink()
        let store = try CacheStore(configuration: testConfiguration(dir, log: log))
        let holder: @Sendable () -> Int = { store.statistics.entries }  // e.g. a background task's closure
        try store.store(bytes(20_000), metadata: Data(), for: StoreKey(primary: "file"))
        try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "s"), storageClass: .session)
        #expect(store.entry(for: StoreKey(primary: "file")) != nil)
        #expect(BlobFiles.list(store.files.sessionsPath).count == 1)

        store.close()
        #expect(store.isClosed)
        #expect(BlobFiles.list(store.files.sessionsPath).isEmpty)
        let probe = open(store.files.lockPath, O_RDWR | O_CLOEXEC)
        #expect(flock(probe, LOCK_EX | LOCK_NB) == 0)
        close(probe)
        // Closed: reads miss, writes are refused, statistics keep the values at closing.
        #expect(store.entry(for: StoreKey(primary: "file")) == nil)
        #expect(store.info(for: StoreKey(primary: "file")) == nil)
        #expect(store.allEntries().isEmpty)
        let error = #expect(throws: CacheStoreError.self) {
            try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "late"))
        }
        #expect(error?.code == .invalidArgument)
        #expect(throws: CacheStoreError.self) { try store.makeBodyWriter() }
        #expect(holder() == 2)
        #expect(store.statistics.memoryHits == 1)
        store.close()  // twice: nothing happens

        let reopened = try CacheStore(configuration: testConfiguration(dir, log: log))
        #expect(reopened.allEntries().map(\.key.primary) == ["file"])  // exclusive open: session entry gone
        #expect(!log.lines.contains { $0.contains("unclean") })
        #expect(reopened.statistics.memoryHits == 1)  // counted before the close, persisted by it
    }

    @Test func closeWritesTheAccessTimesOfMemoryHits() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        let key = StoreKey(primary: "k")
        let store = try CacheStore(configuration: testConfiguration(dir, clock: clock))
        try store.store(bytes(100), metadata: Data(), for: key)
        clock.advance(500)
        #expect(store.entry(for: key) != nil)  // a memory hit: no I/O, the access time waits for a write or close
        store.close()
        let reopened = try CacheStore(configuration: testConfiguration(dir, clock: clock))
        #expect(reopened.info(for: key)?.lastAccessedAt == clock.now)
    }

    /// A process that ends with `exit()` while something (a background task, a closure) still holds its store
    /// leaves no session marker: the `exit()` handler closes stores still open, so the next open runs no
    /// "recovery after an unclean shutdown".
    @Test(.enabled(if: childWriterBinary != nil, "dlcache-bench is not built next to the tests: run `swift build` first"))
    func anExitWhileAThreadHoldsTheStoreIsACleanShutdown() throws {
        let binary = try #require(childWriterBinary)
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let child = try runChild(binary, ["store-child-writer", dir.url.path, "exit-while-held"])
        #expect(child.status == 0)
        #expect(child.output.contains("EXITING"))
        #expect(BlobFiles.list(dir.url.appendingPathComponent("default/sessions").path).isEmpty)
        let log = LogSink()
        let store = try CacheStore(configuration: testConfiguration(dir, log: log))
        #expect(!log.lines.contains { $0.contains("unclean") }, "\(log.lines)")
        #expect(store.allEntries().count == 3)
        // The child's hit and miss counts were persisted at exit (item: statistics across processes).
        let stats = store.statistics
        #expect(stats.memoryHits == 2)
        #expect(stats.memoryMisses == 1)
        #expect(stats.diskMisses == 1)
        #expect(stats.sinceOpen == CacheStoreStatistics.Counters())
    }
}
