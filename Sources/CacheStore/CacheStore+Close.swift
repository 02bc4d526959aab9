import Foundation
import CacheSystem
import Synchronization

/// Closing, and writing the access times and hit/miss counters reads collect.
extension CacheStore {
    /// Closes the store now, deterministically: writes the access times and hit/miss counters not yet written,
    /// closes the index, deletes this store's session marker and releases its lock, so the next opener sees a
    /// clean shutdown (no "recovery after an unclean shutdown") and — when no other process has the namespace
    /// open — runs the open-time cleanup (session entries, expired entries).
    ///
    /// Afterwards every read is a miss, every write throws `CacheStoreError.Code.invalidArgument`, and
    /// `statistics` returns the values at closing. Calling it again does nothing. `deinit` closes a store too,
    /// but only once nothing references it any more (a background task or a closure may still hold it when the
    /// process exits), and the `exit()` handler that closes stores still open waits at most 2 seconds for a
    /// thread using the store. A program, command-line tool or test that needs the close to have happened calls
    /// `close()` itself — e.g. before `exit`, or before reopening the same namespace.
    public func close() {
        _ = shutDown(waitingAtMost: nil)
    }

    /// True once `close()` ran (or the store was closed at `exit()`).
    public var isClosed: Bool { closedFlag.load(ordering: .acquiring) }

    /// The work of `close()`. With `limit`, waits at most `limit` seconds for the index lock (at `exit()` another
    /// thread — or this one, inside a callback — may hold it); when it cannot be had, the marker and the lock are
    /// left in place, so the next opener treats the shutdown as unclean, which it was.
    /// - Returns: false only when the lock could not be had within `limit`.
    @discardableResult
    func shutDown(waitingAtMost limit: TimeInterval?) -> Bool {
        // Counted before anything else: the `exit()` handler waits for the closes in progress on other threads (a
        // store released last by a background thread closes there, in its deinit, unseen by the handler).
        OpenStores.closing.add(1, ordering: .acquiringAndReleasing)
        defer { OpenStores.closing.subtract(1, ordering: .acquiringAndReleasing) }
        guard closedFlag.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return true
        }
        OpenStores.unregister(ObjectIdentifier(self))
        // One deadline for both locks.
        let deadline = limit.map { Date().addingTimeInterval($0) }
        // Closed first, so the index's connection is the last one and its close checkpoints the WAL.
        if let deadline {
            while reader.withLockIfAvailable({ (slot: inout StoreIndex?) in slot = nil }) == nil {
                if Date() >= deadline { return false }
                cs_sleep_microseconds(1_000)
            }
        } else {
            reader.withLock { $0 = nil }
        }
        let dirty = memory.takeDirty()
        let onlyRead = !sessionMarkerCreated.withLock { $0 }
        func closeIndex(_ slot: inout StoreIndex?) -> CacheStoreStatistics {
            if let index = slot, !isReadOnly {
                // Rows queued for the commit writer are committed, not dropped: their callers were promised the
                // outcome of a batch, and their blob files can no longer be deleted once the store is closed.
                let queued = commitQueue.takeBatchForDrain(all: true)
                if !queued.isEmpty { runBatch(queued, index: index, atClose: true) }
                index.addPendingTouches(dirty)
                let unsyncedWAL = onlyRead ? writeAccountingUnsynced(index) : nil
                if unsyncedWAL == nil {
                    do {
                        try writeAccounting(index)
                    } catch {
                        log("close: access times and hit counts not written: \(error)")
                    }
                }
                let final = makeStatistics(slot)
                if let unsyncedWAL { restoreSyncUnlessWALIs(unsyncedWAL, index) }
                slot = nil  // closes the SQLite connection (the last one checkpoints the WAL)
                return final
            }
            let final = makeStatistics(slot)
            slot = nil  // closes the SQLite connection (the last one checkpoints the WAL)
            return final
        }
        let final: CacheStoreStatistics
        if let deadline {
            var acquired: CacheStoreStatistics?
            while acquired == nil {
                acquired = index.withLockIfAvailable { (slot: inout StoreIndex?) -> CacheStoreStatistics in
                    closeIndex(&slot)
                }
                if acquired == nil {
                    if Date() >= deadline { return false }
                    cs_sleep_microseconds(1_000)
                }
            }
            final = acquired ?? CacheStoreStatistics()
        } else {
            final = index.withLock { (slot: inout StoreIndex?) -> CacheStoreStatistics in closeIndex(&slot) }
        }
        finalStatistics.withLock { $0 = final }
        memory.close()
        // A fault-injection test simulating a dead process leaves its marker, as a killed process would.
        if let sessionMarker, !onlyRead, !(configuration.faultSkipsCleanup && configuration.faultInjection != nil) {
            files.removeSession(sessionMarker)
        }
        Self.releaseLock(lockFD)
        keyLocks.close()
        generation.detach()
        files.handles.close()
        return true
    }

    /// Statistics from `index` (call under the index lock; nil: closed, counts of this instance only).
    func makeStatistics(_ index: StoreIndex?) -> CacheStoreStatistics {
        let m = memory.counters()
        let current = CacheStoreStatistics.Counters(memoryHits: m.hits, memoryMisses: m.misses,
                                                    diskHits: diskHits.load(ordering: .relaxed),
                                                    diskMisses: diskMisses.load(ordering: .relaxed))
        var result = CacheStoreStatistics(memoryBytes: m.bytes, memoryEntries: m.entries, sinceOpen: current)
        var lifetime = current
        if let index {
            if let totals = try? index.totals() {
                result.entries = totals.entries
                result.diskBytes = totals.bytes
            }
            // Flushes happen under the same lock: persisted + (current - flushed) counts nothing twice.
            if let persisted = try? index.persistedCounters() {
                lifetime = persisted.adding(current.subtracting(index.flushedCounters))
            }
        }
        result.memoryHits = lifetime.memoryHits
        result.memoryMisses = lifetime.memoryMisses
        result.diskHits = lifetime.diskHits
        result.diskMisses = lifetime.diskMisses
        return result
    }

    /// Writes pending access times and this instance's unpersisted counts in one transaction (index lock held).
    /// - Throws: `CacheStoreError` from SQLite (e.g. `.busy`); nothing is lost then, it is retried next time.
    func writeAccounting(_ index: StoreIndex) throws(CacheStoreError) {
        let counters = currentCounters()
        let touched = !index.pendingTouches.isEmpty
        guard touched || counters != index.flushedCounters else { return }
        try index.db.transaction { () throws(CacheStoreError) in
            try index.flushTouches()
            try index.flushCounters(upTo: counters)
        }
        index.flushedCounters = counters
        if touched { index.invalidateRowCache() }
    }

    /// The close of a store that only read (no marker, so nothing but access times and counters to write): when
    /// the WAL holds no frames, writes them and lets the closing checkpoint run with `PRAGMA synchronous=OFF`, so
    /// answering from the cache costs no `fsync`/`fdatasync` at all (with `NORMAL`: the new WAL's header and its
    /// directory, then the WAL and the database at the checkpoint).
    ///
    /// What that trades: a killed process loses nothing (the bytes are in the kernel's page cache once `write`
    /// returns); only an operating-system crash or power loss within the kernel's write-back delay (about 30 s)
    /// can lose these access times and counts, and — if it tears the few index pages this one transaction
    /// changed — leave an index SQLite reports corrupt, which the next exclusive opener moves aside (the cache
    /// starts empty; bodies are checksummed, so no wrong byte is served). Another writer's stored responses are
    /// not checkpointed unsynced: the WAL must be empty inside this transaction (under SQLite's write lock) and
    /// still hold only its frames at the close (``restoreSyncUnlessWALIs(_:_:)``). Index lock held.
    /// - Returns: the WAL's size after the commit, or nil when the WAL was not empty or the write failed (the
    ///   caller then writes with `writeAccounting`, synchronously).
    func writeAccountingUnsynced(_ index: StoreIndex) -> Int64? {
        let counters = currentCounters()
        guard !index.pendingTouches.isEmpty || counters != index.flushedCounters else { return walSize() }
        do {
            try index.db.execute("PRAGMA synchronous=OFF")
            let empty = try index.db.transaction { () throws(CacheStoreError) -> Bool in
                guard walSize() == 0 else { return false }
                try index.flushTouches()
                try index.flushCounters(upTo: counters)
                return true
            }
            guard empty else {
                try index.db.execute("PRAGMA synchronous=NORMAL")
                return nil
            }
        } catch {
            try? index.db.execute("PRAGMA synchronous=NORMAL")
            return nil
        }
        index.flushedCounters = counters
        index.invalidateRowCache()
        return walSize()
    }

    /// Before the closing checkpoint: returns the connection to `synchronous=NORMAL` when the WAL is no longer
    /// `expected` bytes (another process committed since, and its frames must be checkpointed with syncs).
    func restoreSyncUnlessWALIs(_ expected: Int64, _ index: StoreIndex) {
        if walSize() != expected { try? index.db.execute("PRAGMA synchronous=NORMAL") }
    }

    /// The size of `index.sqlite-wal` in bytes (0 when it does not exist).
    func walSize() -> Int64 {
        BlobFiles.info(files.handles.root, "index.sqlite-wal")?.size ?? 0
    }

    /// Called by reads that went to the index: every `accountingFlushInterval` seconds, writes access times and
    /// counters in a short transaction that gives up at once when another process holds the write lock (a read
    /// never waits for a writer). Memory-tier hits never get here: they do no I/O.
    func flushAccountingIfDue(now: Date) {
        guard !isReadOnly else { return }
        let seconds = Self.wholeSeconds(now)
        let last = lastAccountingFlush.load(ordering: .relaxed)
        guard abs(seconds - last) >= Self.accountingFlushInterval,
              lastAccountingFlush.compareExchange(expected: last, desired: seconds, ordering: .relaxed).exchanged
        else { return }
        let dirty = memory.takeDirty()
        try? withIndex { (index: StoreIndex) throws(CacheStoreError) in
            index.addPendingTouches(dirty)
            index.db.setBusyTimeout(0)
            defer { index.db.setBusyTimeout(configuration.busyTimeout) }
            try writeAccounting(index)
        }
    }
}

/// The stores of this process that are open, so the `exit()` handler can close them (see `CacheStore.close()`).
enum OpenStores {
    final class Box: @unchecked Sendable {
        weak var store: CacheStore?
        init(_ store: CacheStore) { self.store = store }
    }

    private static let stores = Mutex<[ObjectIdentifier: Box]>([:])
    private static let exitHandlerInstalled: Bool = atexit { OpenStores.closeAll() } == 0

    /// Remembers `store` (weakly) and installs the `exit()` handler on first use.
    static func register(_ store: CacheStore) {
        _ = exitHandlerInstalled
        stores.withLock { $0[ObjectIdentifier(store)] = Box(store) }
    }

    /// Forgets a store (closed or deinitialising).
    static func unregister(_ id: ObjectIdentifier) {
        stores.withLock { _ = $0.removeValue(forKey: id) }
    }

    /// Closes running now, on any thread (``CacheStore/shutDown(waitingAtMost:)``).
    static let closing = Atomic<Int>(0)

    /// The `exit()` handler: closes every store still open, waiting at most 2 seconds for each, then waits at most
    /// 2 seconds for the closes other threads are running (a store closing in its deinit is no longer listed).
    static func closeAll() {
        let open = stores.withLock { Array($0.values) }.compactMap(\.store)
        for store in open { store.shutDown(waitingAtMost: 2) }
        let deadline = Date().addingTimeInterval(2)
        while closing.load(ordering: .acquiring) > 0, Date() < deadline { cs_sleep_microseconds(1_000) }
    }
}
