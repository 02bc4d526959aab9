import Foundation
import CacheSystem
import Synchronization

/// One entry's row waiting for the group commit, and the outcome once a batch has run it.
///
/// An entry is acknowledged (its `store`/`commit` call returns) only after the batch holding it committed, so a
/// killed process never loses an acknowledged entry; with ``CacheStore/Durability/powerLoss`` the batch's bodies
/// and `blobs/` were fsynced before that commit.
final class PendingCommit: Sendable {
    /// The row to insert or replace.
    let row: IndexRow
    /// An open descriptor of the entry's blob file that the batch fsyncs before its transaction
    /// (``CacheStore/Durability/powerLoss`` only), or -1. The caller closes it after the outcome.
    let syncDescriptor: Int32
    /// Set once, by the batch that ran this commit; and the task waiting for it (``outcomeWhenRun()``).
    private let state = Mutex<(result: Result<CommitOutcome, CacheStoreError>?,
                               waiter: CheckedContinuation<Result<CommitOutcome, CacheStoreError>, Never>?)>((nil, nil))

    init(row: IndexRow, syncDescriptor: Int32 = -1) {
        self.row = row
        self.syncDescriptor = syncDescriptor
    }

    /// True once a batch ran this commit (whatever its outcome).
    var isDone: Bool { state.withLock { $0.result != nil } }

    /// The outcome, or nil while no batch has run this commit.
    var outcome: Result<CommitOutcome, CacheStoreError>? { state.withLock { $0.result } }

    /// The outcome, once a batch has run this commit (suspends until then).
    func outcomeWhenRun() async -> Result<CommitOutcome, CacheStoreError> {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Result<CommitOutcome, CacheStoreError>? in
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    /// Records the outcome (the first one only) and resumes the task waiting for it — unless `resumingWaiter` is
    /// false: the commit writer resumes its batch's tasks with ``resumeWaiter()`` once it holds no reference to
    /// the store any more, so the last reference a resumed task drops is never the writer's (a store released
    /// on the writer's thread would close there, racing the process's `exit`).
    func finish(_ outcome: Result<CommitOutcome, CacheStoreError>, resumingWaiter: Bool = true) {
        let (waiter, result) = state.withLock { state -> (CheckedContinuation<Result<CommitOutcome, CacheStoreError>, Never>?, Result<CommitOutcome, CacheStoreError>) in
            if let result = state.result { return (nil, result) }
            state.result = outcome
            guard resumingWaiter else { return (nil, outcome) }
            defer { state.waiter = nil }
            return (state.waiter, outcome)
        }
        waiter?.resume(returning: result)
    }

    /// Resumes the task waiting for this commit's outcome, once there is one (no-op otherwise, or when resumed).
    func resumeWaiter() {
        let (waiter, result) = state.withLock { state -> (CheckedContinuation<Result<CommitOutcome, CacheStoreError>, Never>?, Result<CommitOutcome, CacheStoreError>?) in
            guard let result = state.result else { return (nil, nil) }
            defer { state.waiter = nil }
            return (state.waiter, result)
        }
        if let waiter, let result { waiter.resume(returning: result) }
    }
}

/// What committing one row did, for the caller's work after the commit.
struct CommitOutcome: Sendable {
    /// The blob the replaced row named (the caller deletes it).
    var oldBlob: String?
    /// The file of an idle partial entry of the same key that the row superseded (the caller deletes it).
    var idlePartial: String?
    /// Whether the store is over a limit after this row (the caller sweeps).
    var overLimit: Bool
}

/// Which synchronous caller of ``CacheStore/groupCommit(_:)`` runs the next batch: one at a time; the callers
/// arriving while it runs sleep (a condition variable, no spinning) until it ends, then find their row run by its
/// batch or take the lead for theirs. The async commit writer does not take part: it contends for the index lock
/// alone, and a row it ran is seen as done here.
final class SyncLeader: @unchecked Sendable {
    // `leading` is read and written only with `condition` locked.
    private let condition = NSCondition()
    private var leading = false

    /// True when the caller now leads (it must call ``endLeading()``); false, after sleeping until the current
    /// leader ended (or a spurious wake-up), when another caller leads.
    func lead() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if !leading {
            leading = true
            return true
        }
        condition.wait()
        return false
    }

    /// Ends this caller's lead and wakes every caller waiting for it.
    func endLeading() {
        condition.lock()
        leading = false
        condition.broadcast()
        condition.unlock()
    }
}

/// Commits waiting for the index writer, oldest first, and whether a drain (``CacheStore/drainBatch()``) is
/// scheduled to run them.
final class CommitQueue: Sendable {
    /// Rows one transaction commits at most; the rest wait for the next batch.
    static let batchLimit = 512
    private let state = Mutex<(waiting: [PendingCommit], draining: Bool)>(([], false))
    /// Transactions run by batches so far (for tests and diagnostics).
    let batchesRun = Atomic<Int>(0)
    /// The synchronous caller running a batch now, if any (``CacheStore/groupCommit(_:)``).
    let syncLeader = SyncLeader()

    /// Commits waiting now.
    var count: Int { state.withLock { $0.waiting.count } }

    /// Queues `commit` for the next batch that any caller runs.
    func enqueue(_ commit: PendingCommit) {
        state.withLock { $0.waiting.append(commit) }
    }

    /// Queues `commit` for the drain; true when no drain is scheduled, so the caller must schedule one.
    func enqueueForDrain(_ commit: PendingCommit) -> Bool {
        state.withLock { state -> Bool in
            state.waiting.append(commit)
            if state.draining { return false }
            state.draining = true
            return true
        }
    }

    /// Takes up to ``batchLimit`` waiting commits, oldest first, and `commit` among them: taken out of the queue
    /// when it waits further back, so no later batch runs it again.
    func takeBatch(including commit: PendingCommit) -> [PendingCommit] {
        state.withLock { state -> [PendingCommit] in
            var batch = Self.take(&state.waiting)
            if !batch.contains(where: { $0 === commit }) {
                state.waiting.removeAll { $0 === commit }
                batch.append(commit)
            }
            return batch
        }
    }

    /// For the drain, after a batch: ends the drain when no commit waits (true: more to run).
    func continueDrain() -> Bool {
        state.withLock { state -> Bool in
            if state.waiting.isEmpty { state.draining = false }
            return state.draining
        }
    }

    /// For the drain: up to ``batchLimit`` waiting commits; when none is waiting (or `all` is set: every one), the
    /// drain ends — the next ``enqueueForDrain(_:)`` schedules another.
    func takeBatchForDrain(all: Bool = false) -> [PendingCommit] {
        state.withLock { state -> [PendingCommit] in
            if all || state.waiting.isEmpty {
                state.draining = false
                defer { state.waiting.removeAll() }
                return state.waiting
            }
            return Self.take(&state.waiting)
        }
    }

    private static func take(_ queue: inout [PendingCommit]) -> [PendingCommit] {
        guard queue.count > batchLimit else {
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        let batch = Array(queue.prefix(batchLimit))
        queue.removeFirst(batchLimit)
        return batch
    }
}

extension CacheStore {
    /// Commits `pending`'s row together with every other row waiting when this caller gets the index (group
    /// commit): the first waiter to get the index lock takes all waiting rows and commits them in one
    /// transaction — one WAL append, one lock round, one generation bump — each row inside its own savepoint, so a
    /// row that fails (a constraint, an injected fault) is rolled back alone and the others commit. A waiter whose
    /// row an earlier batch ran finds its outcome when it gets the lock and returns at once.
    ///
    /// With ``Durability/powerLoss`` the batch first makes its bodies durable in one pass — write-back started for
    /// every body at once, so their writes are in flight together, then an fsync of each (which mostly waits for
    /// writes already queued; on a journaling file system the first one's commit carries the others' metadata),
    /// then one fsync of `blobs/` — so a row never becomes durable before its body.
    /// - Throws: the row's own `CacheStoreError`, or the batch's (the sync pass of its body, the transaction, the
    ///   commit); `.permissionDenied` / `.invalidArgument` for a read-only or closed store.
    func groupCommit(_ pending: PendingCommit) throws(CacheStoreError) -> CommitOutcome {
        try requireWritable()
        commitQueue.enqueue(pending)
        // A test hook's pause only (an error it throws is ignored: the row is queued and will be run).
        try? fault("commit-queued")
        // One synchronous caller at a time runs a batch; the others sleep until it has run (their rows are
        // likely in it) instead of spinning for the index lock on cores that could be writing bodies.
        while !commitQueue.syncLeader.lead() {
            if let outcome = pending.outcome { return try outcome.get() }
        }
        // The lead ends as soon as the batch has run (its commits finished), before its files are deleted.
        var leading = true
        func endLeading() {
            if leading { commitQueue.syncLeader.endLeading() }
            leading = false
        }
        defer { endLeading() }
        let dirty = memory.takeDirty()
        do {
            let ran = try withIndex { (index: StoreIndex) throws(CacheStoreError) -> (batch: [PendingCommit], eviction: Eviction?)? in
                defer { endLeading() }
                index.addPendingTouches(dirty)
                // A batch runs and finishes its commits under this lock: `pending` is done or still queued.
                guard !pending.isDone else { return nil }
                let batch = commitQueue.takeBatch(including: pending)
                return (batch, runBatch(batch, index: index, resumingWaiters: false))
            }
            if let ran {
                // As the commit writer does: the tasks whose rows this batch ran resume once its sweep's files are gone.
                if let eviction = ran.eviction, !closedFlag.load(ordering: .acquiring) {
                    finishEviction(eviction, removingFromMemory: false)
                }
                for commit in ran.batch { commit.resumeWaiter() }
            }
        } catch {
            // Closed while waiting: the close ran the rows still queued, this one among them.
            guard let outcome = pending.outcome else { throw error }
            return try outcome.get()
        }
        guard let outcome = pending.outcome else {
            throw CacheStoreError(.io, "commit of \(pending.row.info.key) was not run")
        }
        return try outcome.get()
    }

    /// ``groupCommit(_:)`` for async callers: the row is queued for the store's commit writer, and the caller is
    /// suspended — not blocked — until a batch has run it. The writer (``drainBatch()``, on its own serial queue)
    /// takes every row waiting when it gets the index, so rows from tasks finishing while one batch runs form the
    /// next; a caller of the synchronous ``groupCommit(_:)`` may run them in its batch too. The row is acknowledged
    /// (the call returns) only after its batch committed, as with ``groupCommit(_:)``.
    /// - Throws: as ``groupCommit(_:)``.
    func groupCommit(_ pending: PendingCommit) async throws(CacheStoreError) -> CommitOutcome {
        try requireWritable()
        if commitQueue.enqueueForDrain(pending) {
            // Weak: the tasks waiting for queued rows keep the store alive; the writer resumes them only once the
            // temporary reference of `drainBatch()` is gone (see ``PendingCommit/finish(_:resumingWaiter:)``).
            commitWriter.async { [weak self] in
                // `self` is loaded again only while rows wait, whose callers hold the store.
                while let (finished, more) = self?.drainBatch() {
                    for commit in finished { commit.resumeWaiter() }
                    if !more { return }
                }
            }
        }
        return try await pending.outcomeWhenRun().get()
    }

    /// One turn of the commit writer: runs a batch of the queued rows and returns them, their outcomes recorded
    /// and their tasks not yet resumed, and whether more rows wait (false: the drain has ended); nil when none
    /// was waiting. A store that cannot run them (closed) finishes every waiting row with that error, so no
    /// caller waits forever.
    func drainBatch() -> (finished: [PendingCommit], more: Bool)? {
        let dirty = memory.takeDirty()
        do {
            let turn = try withIndex { (index: StoreIndex) throws(CacheStoreError) -> (finished: [PendingCommit], more: Bool, eviction: Eviction?)? in
                index.addPendingTouches(dirty)
                let batch = commitQueue.takeBatchForDrain()
                guard !batch.isEmpty else { return nil }
                let eviction = runBatch(batch, index: index, resumingWaiters: false)
                return (batch, commitQueue.continueDrain(), eviction)
            }
            guard let turn else { return nil }
            // Before the batch's tasks resume: a caller finds the store within its limits, as after its own sweep.
            // (A store closed meanwhile has closed its directories: the files stay as orphans `verify` deletes.)
            if let eviction = turn.eviction, !closedFlag.load(ordering: .acquiring) {
                finishEviction(eviction, removingFromMemory: false)
            }
            return (turn.finished, turn.more)
        } catch {
            let left = commitQueue.takeBatchForDrain(all: true)
            for commit in left { commit.finish(.failure(error), resumingWaiter: false) }
            return left.isEmpty ? nil : (left, false)
        }
    }

    /// Runs `batch` in one transaction (see ``groupCommit(_:)``), bumps the shared generation, then finishes every
    /// commit in it (under the index lock, so no caller's row runs twice; after the bump, so a caller resumed by
    /// its outcome finds the generation of its write). `atClose`: the store is closing, so the work that follows a
    /// commit and needs the store's directories is done here (the replaced blob and a superseded idle partial are
    /// deleted; no sweep), not by the caller after the store closed.
    /// `resumingWaiters`: false for the commit writer, which resumes the tasks itself (``drainBatch()``).
    ///
    /// When a row leaves the store over a limit, the batch sweeps once for all its rows, in a second transaction
    /// before any caller resumes (``sweepAfter(_:outcomes:index:)``), keeping every row it committed; the caller
    /// deletes the returned eviction's files (``finishEviction(_:removingFromMemory:)``) once it has released the
    /// index, and then resumes the tasks (run it with `resumingWaiters` false).
    @discardableResult
    func runBatch(_ batch: [PendingCommit], index: StoreIndex, atClose: Bool = false,
                  resumingWaiters: Bool = true) -> Eviction? {
        defer { index.invalidateRowCache() }
        var runnable = batch
        if configuration.durability == .powerLoss {
            runnable = syncBodies(batch, resumingWaiters: resumingWaiters)
            if runnable.contains(where: { $0.row.blobID != nil }) { files.syncBlobsDirectory() }
        }
        guard !runnable.isEmpty else { return nil }
        let counters = currentCounters()
        commitQueue.batchesRun.add(1, ordering: .relaxed)
        do {
            let outcomes = try index.db.transaction { () throws(CacheStoreError) -> [Result<CommitOutcome, CacheStoreError>] in
                try index.flushTouches()
                try index.flushCounters(upTo: counters)
                if runnable.count == 1 { return [Result { () throws(CacheStoreError) in try apply(runnable[0].row, index) }] }
                var outcomes: [Result<CommitOutcome, CacheStoreError>] = []
                for commit in runnable {
                    let outcome = Result { () throws(CacheStoreError) in
                        try index.db.savepoint { () throws(CacheStoreError) in try apply(commit.row, index) }
                    }
                    // A row whose error made SQLite roll back the whole transaction took the earlier rows with
                    // it: the batch fails as one, and no later row runs outside it.
                    if case .failure(let error) = outcome, !index.db.isInTransaction { throw error }
                    outcomes.append(outcome)
                }
                return outcomes
            }
            index.flushedCounters = counters
            generation.bump { old, new in memory.noteOwnWrite(old: old, new: new) }
            var finished = outcomes
            let eviction = atClose ? nil : sweepAfter(runnable, outcomes: &finished, index: index)
            for (commit, outcome) in zip(runnable, finished) {
                commit.finish(atClose ? outcome.map { finishedAtClose($0, row: commit.row) } : outcome,
                              resumingWaiter: resumingWaiters)
            }
            return eviction
        } catch {
            generation.bump { old, new in memory.noteOwnWrite(old: old, new: new) }
            for commit in runnable { commit.finish(.failure(error), resumingWaiter: resumingWaiters) }
            return nil
        }
    }

    /// The batch's sweep: when a committed row of `batch` left the store over a limit, evicts in one transaction
    /// (``evict(_:now:includeAge:keeping:)``, keeping every committed row of the batch) and, when that brings the
    /// store within its limits, clears `overLimit` in `outcomes` so no caller sweeps again. Nil when nothing was
    /// over or the sweep failed (logged; the callers then sweep as after a lone write, each keeping its own row).
    private func sweepAfter(_ batch: [PendingCommit], outcomes: inout [Result<CommitOutcome, CacheStoreError>],
                            index: StoreIndex) -> Eviction? {
        var kept = Set<StoreKey>()
        var over = false
        for (commit, outcome) in zip(batch, outcomes) {
            guard case .success(let committed) = outcome else { continue }
            kept.insert(commit.row.info.key)
            over = over || committed.overLimit
        }
        guard over else { return nil }
        let now = configuration.currentTime()
        do {
            let (eviction, within) = try index.db.transaction { () throws(CacheStoreError) -> (Eviction, Bool) in
                let eviction = try evict(index, now: now, includeAge: false, keeping: kept)
                return (eviction, !isOverLimit(try index.totals()))
            }
            if !eviction.removed.isEmpty || !eviction.partialFiles.isEmpty {
                generation.bump { old, new in memory.noteOwnWrite(old: old, new: new) }
            }
            // Under the index lock, before any caller resumes: no read of this process serves an evicted key.
            forgetEvicted(eviction)
            if within {
                outcomes = outcomes.map { outcome in
                    outcome.map { CommitOutcome(oldBlob: $0.oldBlob, idlePartial: $0.idlePartial, overLimit: false) }
                }
            }
            return eviction
        } catch {
            log("sweep after a batch of \(batch.count) rows failed: \(error)")
            return nil
        }
    }

    /// A row committed by the closing store: the files its commit superseded are deleted now, while the store's
    /// directories are open, and the caller is left nothing to delete or sweep.
    private func finishedAtClose(_ outcome: CommitOutcome, row: IndexRow) -> CommitOutcome {
        if let old = outcome.oldBlob, old != row.blobID { files.removeBlob(old) }
        if let partial = outcome.idlePartial { files.removeTemporary(partial) }
        return CommitOutcome(oldBlob: nil, idlePartial: nil, overLimit: false)
    }

    /// The batch's sync pass: starts write-back of every body with a descriptor, then fsyncs each. Finishes the
    /// commits whose fsync failed (with that error) and returns the others.
    private func syncBodies(_ batch: [PendingCommit], resumingWaiters: Bool) -> [PendingCommit] {
        for commit in batch where commit.syncDescriptor >= 0 { _ = cs_start_writeback(commit.syncDescriptor) }
        return batch.filter { commit in
            guard commit.syncDescriptor >= 0 else { return true }
            do throws(CacheStoreError) {
                try BlobFiles.sync(commit.syncDescriptor, path: commit.row.blobID.map(files.blobPath) ?? files.blobsPath)
                return true
            } catch {
                commit.finish(.failure(error), resumingWaiter: resumingWaiters)
                return false
            }
        }
    }

    /// One row's changes inside the batch's transaction: the pinned-room check, the upsert, the superseded partial, the limit check.
    private func apply(_ row: IndexRow, _ index: StoreIndex) throws(CacheStoreError) -> CommitOutcome {
        try fault("batch-row")
        let key = row.info.key
        // Decided here, in the transaction: no extra index lock per write, and no write between check and commit.
        if let refusal = try pinnedRoomRefusal(size: row.info.bodySize, key: key, index: index) {
            throw CacheStoreError(.entryTooLarge, refusal)
        }
        let old = try index.upsert(row)
        // The complete response supersedes a partial of the same key (a resumed one is this very body).
        let partial = try index.partial(for: key)
        if partial != nil { try index.deletePartial(key) }
        return CommitOutcome(oldBlob: old, idlePartial: partial?.owner == nil ? partial?.file : nil,
                             overLimit: isOverLimit(try index.totals()))
    }
}
