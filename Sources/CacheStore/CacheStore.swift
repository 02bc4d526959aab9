import Foundation
import CacheSystem
import Synchronization

/// A persistent, crash-safe key → (metadata bytes, body) store with a memory tier; it knows nothing about HTTP.
///
/// Layout: `<directory>/<namespace>/{index.sqlite, blobs/<id>, tmp/, sessions/, lock}`. The index is SQLite in
/// WAL mode; bodies above `Configuration.inlineThreshold` bytes are immutable files named by a random id, written
/// into `blobs/<id>` (a body held in memory) or streamed into `tmp/` and renamed there (`rename(2)`), then named by
/// a row in one index transaction (fsyncs first with `Durability.powerLoss`), so a reader never sees a
/// half-written body and a replaced entry always gets a new blob. The memory tier is a write-through LRU bounded in bytes and
/// entries. All methods are synchronous and thread-safe; several processes may share one directory (see
/// `CacheStore+Open.swift` for the locking protocol). Call `close()` when done with a store: it releases the
/// namespace deterministically (`deinit` and an `exit()` handler are fallbacks). A directory this process may not
/// write opens read-only (`isReadOnly`).
public final class CacheStore: Sendable {
    /// The configuration the store was opened with.
    public let configuration: Configuration
    /// `<directory>/<namespace>`: where this store's files live.
    public let directoryURL: URL
    /// True when the store was opened read-only (`Configuration.readOnly`, or a directory it may not write):
    /// reads work, writes throw `CacheStoreError.Code.permissionDenied`.
    public let isReadOnly: Bool

    /// Bytes this process may still write on the file system holding the namespace's `tmp/` (`fstatvfs` of the
    /// open directory); nil when it cannot be read (an unavailable or closed store).
    public var temporarySpaceAvailable: Int64? {
        guard !isUnavailable, files.handles.tmp >= 0 else { return nil }
        let available = cs_available_bytes(files.handles.tmp)
        return available >= 0 ? available : nil
    }
    /// Why the store is read-only (the configuration, or the failed system call); nil when it is writable.
    public let readOnlyReason: String?
    /// True for a store made by ``unavailable(configuration:reason:)``: it holds nothing and stores nothing.
    public let isUnavailable: Bool

    let files: BlobFiles
    let memory: MemoryTier
    /// nil once the store is closed.
    let index: Mutex<StoreIndex?>
    /// A second connection to the same index for the reads of a lookup that misses the row cache (the variants
    /// and partials of a primary key): in WAL mode they read the last committed state while a batch of commits
    /// holds `index`, so a lookup never waits for a write. nil for a read-only store (and once closed): those
    /// reads then go through `index`.
    let reader: Mutex<StoreIndex?>
    let lockFD: Int32
    /// The name of this store's marker in `sessions/`; nil for a read-only store. The file exists from the store's
    /// first write (``ensureSessionMarker()``) until it is closed.
    let sessionMarker: String?
    /// Whether this store created its marker file, i.e. wrote more than access times and counters.
    let sessionMarkerCreated = Mutex<Bool>(false)
    let generation: SharedGeneration
    /// Blob files whose checksum this process has verified, with the identity they had then (see `entry(for:)`).
    let verifiedBlobs = Mutex<[String: BlobFiles.FileIdentity]>([:])
    /// Blob ids renamed into `blobs/` whose row is not committed yet (`verify(repair:)` never removes them).
    let inFlightBlobs = Mutex<Set<String>>([])
    /// Primary keys whose pinned entry this store dropped as damaged or unreadable: the entry stored next for
    /// such a key (its refetch) is pinned, as a replacement of a pinned entry is. Held in this process only: a
    /// damaged pinned entry dropped by another process (or by `verify(repair:)` before a restart) is refetched
    /// unpinned. Forgotten when the key is stored again or removed.
    let pinsOfDroppedEntries = Mutex<Set<String>>([])
    /// Rows waiting for the group commit (``groupCommit(_:)``).
    let commitQueue = CommitQueue()
    /// The serial queue on which async callers' rows are committed (``groupCommit(_:)`` async, ``drainBatch()``).
    let commitWriter = DispatchQueue(label: "dlcache.store.commit")
    /// The cross-process key locks this store holds (``acquireKeyLock(_:timeout:)``).
    let keyLocks = KeyLockTable()
    let diskHits = Atomic<Int>(0)
    let diskMisses = Atomic<Int>(0)
    /// Set by `close()` (and `deinit`); a closed store misses every read and throws on every write.
    let closedFlag = Atomic<Bool>(false)
    /// When access times and counters were last written (whole seconds of `configuration.currentTime()`).
    let lastAccountingFlush: Atomic<Int>
    /// The statistics at `close()` (what `statistics` reports afterwards).
    let finalStatistics = Mutex<CacheStoreStatistics?>(nil)
    /// Seconds between the opportunistic flushes of access times and counters done by disk reads.
    static let accountingFlushInterval = 30

    /// Opens (creating when needed) the store at `<directory>/<namespace>` and recovers it from any crash.
    /// - Throws: `CacheStoreError` — `.invalidNamespace`, `.permissionDenied`, `.corruptIndex` (only when the
    ///   index is damaged while another process has it open), `.io`.
    public convenience init(directory: URL, namespace: String = "default") throws(CacheStoreError) {
        try self.init(configuration: Configuration(directory: directory, namespace: namespace))
    }

    /// Opens (creating when needed) the store described by `configuration` and recovers it from any crash.
    ///
    /// An existing store this process may not write (permissions, a read-only mount) opens read-only
    /// (`isReadOnly`); see `Configuration.readOnly`.
    /// - Throws: `CacheStoreError` — `.invalidNamespace`, `.permissionDenied` (also: the directory cannot be
    ///   read, or a read-only store has no index), `.corruptIndex` (only when the index is damaged while another
    ///   process has it open, or in a read-only store), `.io`.
    public init(configuration: Configuration) throws(CacheStoreError) {
        let opened = try Self.open(configuration)
        self.configuration = configuration
        self.files = opened.files
        self.directoryURL = opened.files.root
        self.lockFD = opened.lockFD
        self.sessionMarker = opened.sessionMarker
        self.generation = opened.generation
        self.isReadOnly = opened.readOnlyReason != nil
        self.readOnlyReason = opened.readOnlyReason
        self.isUnavailable = false
        self.lastAccountingFlush = Atomic(Self.wholeSeconds(configuration.currentTime()))
        self.memory = MemoryTier(maxBytes: configuration.maxMemoryBytes, maxEntries: configuration.maxMemoryEntries,
                                 maxEntryBytes: configuration.maxMemoryEntryBytes,
                                 recordsAccess: opened.readOnlyReason == nil)
        let reader = opened.readOnlyReason == nil
            ? try? StoreIndex(opened.files, busyTimeout: configuration.busyTimeout, mode: .readWrite) : nil
        self.reader = Mutex(reader)
        self.index = Mutex(opened.index)  // last use of `opened`: the index is sent into the mutex
        OpenStores.register(self)
    }

    /// A store that holds nothing and stores nothing, for a client that must work without its cache (the
    /// directory is unusable: refused, full, unreadable): every read misses, every write throws
    /// `.permissionDenied` naming `reason`, and no file is touched. `isUnavailable` is true.
    public static func unavailable(configuration: Configuration, reason: String) -> CacheStore {
        CacheStore(unavailable: configuration, reason: reason)
    }

    private init(unavailable configuration: Configuration, reason: String) {
        self.configuration = configuration
        let root = configuration.directory.standardizedFileURL.appendingPathComponent(configuration.namespace)
        self.files = BlobFiles.detached(root: root)
        self.directoryURL = root
        self.lockFD = -1
        self.sessionMarker = nil
        self.generation = SharedGeneration(directory: -1, name: "generation", readOnly: true)
        self.isReadOnly = true
        self.readOnlyReason = "the cache is unavailable: \(reason)"
        self.isUnavailable = true
        self.lastAccountingFlush = Atomic(Self.wholeSeconds(configuration.currentTime()))
        self.memory = MemoryTier(maxBytes: 0, maxEntries: 0, maxEntryBytes: 0, recordsAccess: false)
        self.index = Mutex(nil)
        self.reader = Mutex(nil)
        self.closedFlag.store(true, ordering: .releasing)
    }


    deinit {
        shutDown(waitingAtMost: nil)
    }

    func log(_ message: String) {
        configuration.logger("[\(configuration.namespace)] \(message)")
    }

    /// `date` in whole seconds since 1970, clamped (never traps on NaN or huge values).
    static func wholeSeconds(_ date: Date) -> Int {
        let t = date.timeIntervalSince1970
        return t.isFinite ? Int(max(-1e15, min(1e15, t))) : 0
    }

    /// Throws unless the store is open and writable.
    /// - Throws: `.permissionDenied` for a read-only store, `.invalidArgument` for a closed one.
    func requireWritable() throws(CacheStoreError) {
        if let readOnlyReason {
            throw CacheStoreError(.permissionDenied, "store \(directoryURL.path) is read-only: \(readOnlyReason)")
        }
        if closedFlag.load(ordering: .relaxed) {
            throw CacheStoreError(.invalidArgument, "store \(directoryURL.path) is closed")
        }
        try ensureSessionMarker()
    }

    /// Creates this store's marker in `sessions/` unless it exists: called before every write but the access
    /// times and counters, so an exclusive opener finding it knows a writer died (see `CacheStore+Open.swift`).
    /// - Throws: `CacheStoreError` from the system call (e.g. `.diskFull`); the write is then not attempted.
    func ensureSessionMarker() throws(CacheStoreError) {
        guard let marker = sessionMarker else { return }
        try sessionMarkerCreated.withLock { (created: inout Bool) throws(CacheStoreError) in
            guard !created else { return }
            let fd = cs_open_file_at(files.handles.sessions, marker, CS_OPEN_WRITE, CS_OPEN_CREATE_NEW, 0o600)
            guard fd >= 0 else { throw CacheStoreError.posix(cs_errno(), "create \(files.sessionsPath)/\(marker)") }
            _ = cs_close(fd)
            created = true
        }
    }

    /// Runs `body` with the index under the store's lock, after ending the disk hits' held read transaction
    /// unless `keepingHeldRead` (only ``diskEntry(for:recordsUse:)`` keeps it).
    /// - Throws: `body`'s error, or `.invalidArgument` when the store is closed.
    func withIndex<T: Sendable>(keepingHeldRead: Bool = false,
                                _ body: (StoreIndex) throws(CacheStoreError) -> T) throws(CacheStoreError) -> T {
        try index.withLock { (index: inout StoreIndex?) throws(CacheStoreError) -> T in
            guard let index else { throw CacheStoreError(.invalidArgument, "store \(directoryURL.path) is closed") }
            if !keepingHeldRead, index.db.heldRead != 0 { index.db.endHeldRead() }
            return try body(index)
        }
    }

    /// Runs the read `body` on the reader connection (``reader``), which no commit holds; on `index` when the store
    /// has no reader (read-only).
    /// - Throws: `CacheStoreError` from `body`; `.invalidArgument` for a closed store.
    func withReader<T: Sendable>(_ body: (StoreIndex) throws(CacheStoreError) -> T) throws(CacheStoreError) -> T {
        let answer = try reader.withLock { (slot: inout StoreIndex?) throws(CacheStoreError) -> T? in
            guard let reader = slot else { return nil }
            return try body(reader)
        }
        if let answer { return answer }
        return try withIndex(body)
    }

    /// How long a disk hit's read transaction stays open for the hits that follow it (see
    /// `StoreIndex.row(for:withBody:generation:touching:holdingRead:)`), in milliseconds; and the gap between two
    /// index lookups, in seconds (of the coarse clock), under which the second one opens such a transaction.
    static let heldReadMilliseconds = 2
    static let heldReadBurstGap = 0.005

    /// Ends the held read transaction `token` in `heldReadMilliseconds` unless it has ended by then.
    func scheduleHeldReadEnd(_ token: UInt64) {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Self.heldReadMilliseconds)) { [weak self] in
            self?.index.withLock { (slot: inout StoreIndex?) in
                if let index = slot, index.db.heldRead == token { index.db.endHeldRead() }
            }
        }
    }

    /// A random 32-byte secret kept in the namespace's owner-only index, the same for every process using it
    /// (callers key hashes of secrets with it so that none is stored in plaintext); `nil` when the index has
    /// none or cannot be read (an index opened read-only without a `key_secret` row, a closed or broken store).
    public func keySecret() -> [UInt8]? {
        (try? withIndex { (index: StoreIndex) throws(CacheStoreError) -> [UInt8]? in try index.keySecret() }) ?? nil
    }

    /// This instance's hit and miss counts so far.
    func currentCounters() -> CacheStoreStatistics.Counters {
        let m = memory.counters()
        return CacheStoreStatistics.Counters(memoryHits: m.hits, memoryMisses: m.misses,
                                             diskHits: diskHits.load(ordering: .relaxed),
                                             diskMisses: diskMisses.load(ordering: .relaxed))
    }

    /// Runs `body` in one index write transaction, first writing the access times recorded by reads and this
    /// instance's unpersisted hit/miss counts. Bumps the shared generation so other processes drop their memory
    /// tiers.
    /// - Throws: `body`'s error; `.permissionDenied` (read-only) or `.invalidArgument` (closed) before anything.
    func writeTransaction<T: Sendable>(_ body: (StoreIndex) throws(CacheStoreError) -> T) throws(CacheStoreError) -> T {
        try requireWritable()
        let dirty = memory.takeDirty()
        let value = try withIndex { (index: StoreIndex) throws(CacheStoreError) -> T in
            index.addPendingTouches(dirty)
            defer { index.invalidateRowCache() }
            let counters = currentCounters()
            let value = try index.db.transaction { () throws(CacheStoreError) -> T in
                try index.flushTouches()
                try index.flushCounters(upTo: counters)
                return try body(index)
            }
            index.flushedCounters = counters
            return value
        }
        generation.bump { old, new in memory.noteOwnWrite(old: old, new: new) }
        return value
    }

    /// The time of a memory-tier hit's access: the configured clock, or — with the default clock —
    /// the system layer's coarse clock (`CLOCK_REALTIME_COARSE` on Linux; resolution of a scheduler tick, a few ms; access times only order LRU eviction and
    /// `maxAge`, so that suffices, and it costs a fraction of a precise read on the hit path).
    @inline(__always)
    func hitClock() -> Date {
        if let custom = configuration.customNow { return custom() }
        return Date(timeIntervalSince1970: cs_coarse_now())
    }

    func fault(_ step: String) throws(CacheStoreError) {
        try configuration.faultInjection?(step)
    }

    // MARK: Reads

    /// The namespace's shared change counter now, for a caller that keeps what it read from the index: while it
    /// returns the same value, no process has committed a write to the namespace since (every committed write
    /// bumps it, after its commit). `nil` when the counter is not shared (it cannot tell) or was lost (see
    /// `SharedGeneration`): then nothing read may be reused.
    package var changeCounter: UInt64? {
        guard generation.isShared, !generation.isLost else { return nil }
        return generation.current
    }

    /// What the index knows about `key` (metadata included, body not read); nil when absent or unreadable.
    /// Refreshes the entry's last-access time.
    public func info(for key: StoreKey) -> EntryInfo? {
        let now = configuration.currentTime()
        defer { flushAccountingIfDue(now: now) }
        let generationNow = generation.isShared ? generation.current : nil
        do {
            return try withIndex { (index: StoreIndex) throws(CacheStoreError) -> EntryInfo? in
                guard var row = try index.row(for: key, withBody: false, generation: generationNow) else { return nil }
                if !isReadOnly { index.pendingTouches[key] = now.timeIntervalSince1970 }
                row.info.lastAccessedAt = now
                return row.info
            }
        } catch {
            log("info(\(key)) failed: \(error)")
            return nil
        }
    }

    /// The entry for `key` with its body, checksum verified; nil on a miss (absent, unreadable, or a checksum
    /// mismatch — then the entry is deleted). A hit refreshes the last-access time (LRU).
    public func entry(for key: StoreKey) -> StoredEntry? {
        if memory.isEnabled, let hit = memory.get(key, now: hitClock(), generation: generation.current) { return hit }
        return diskEntry(for: key, recordsUse: true)
    }

    /// The entry for `key` with its body, checksum verified like ``entry(for:)`` (a damaged entry is deleted), but
    /// without counting a hit or miss, refreshing the last-access time or filling the memory tier: for reading back
    /// what was just stored, to copy it to another tier, which is not a use of the entry.
    public func peekEntry(for key: StoreKey) -> StoredEntry? {
        if memory.isEnabled, let entry = memory.peek(key, generation: generation.current) { return entry }
        return diskEntry(for: key, recordsUse: false)
    }

    /// The disk tier's part of ``entry(for:)`` (`recordsUse`) and ``peekEntry(for:)``.
    private func diskEntry(for key: StoreKey, recordsUse: Bool) -> StoredEntry? {
        let now = configuration.currentTime()
        defer { flushAccountingIfDue(now: now) }  // after the hit or miss below is counted
        let epoch = memory.isEnabled ? memory.epoch : 0  // no lock when the tier is off
        let generationNow = generation.isShared ? generation.current : nil
        let row: IndexRow?
        do {
            let touch = recordsUse && !isReadOnly ? now.timeIntervalSince1970 : nil
            // Hits in a burst share one read transaction (valid while the shared generation stays the same).
            let clock = cs_coarse_now()
            let holding = generationNow != nil && !generation.isLost
            var opened: UInt64 = 0
            row = try withIndex(keepingHeldRead: true) { (index: StoreIndex) throws(CacheStoreError) -> IndexRow? in
                let burst = holding && abs(clock - index.lastLookup) < Self.heldReadBurstGap
                index.lastLookup = clock
                let held = index.db.heldRead
                let row = try index.row(for: key, withBody: true, generation: generationNow, touching: touch,
                                        holdingRead: burst)
                if index.db.heldRead != held { opened = index.db.heldRead }
                return row
            }
            if opened != 0 { scheduleHeldReadEnd(opened) }
        } catch {
            if !closedFlag.load(ordering: .relaxed) { log("entry(\(key)): index read failed: \(error)") }
            row = nil
        }
        guard var row else {
            if recordsUse { diskMisses.add(1, ordering: .relaxed) }
            return nil
        }
        let body: Data
        do {
            var identity: BlobFiles.FileIdentity?
            if let inline = row.inlineBody {
                body = inline
            } else if let blob = row.blobID {
                (body, identity) = try files.readBlob(blob, expectedSize: row.info.bodySize)
            } else {
                throw CacheStoreError(.corruptIndex, "row has neither an inline body nor a blob")
            }
            try verify(body, of: row, identity: identity)
        } catch {
            log("entry(\(key)): dropping unreadable entry: \(error)")
            drop(key, blobID: row.blobID)
            if recordsUse { diskMisses.add(1, ordering: .relaxed) }
            return nil
        }
        guard recordsUse else { return StoredEntry(info: row.info, body: body) }
        diskHits.add(1, ordering: .relaxed)
        row.info.lastAccessedAt = now
        let entry = StoredEntry(info: row.info, body: body)
        memory.insert(entry, ifEpoch: epoch)
        return entry
    }

    /// Checks `body` against the row's size and crc32.
    ///
    /// A blob file is immutable, so its crc32 is computed on the first read by this process and again only when
    /// the file's identity (inode, size, mtime, ctime) changes: even libdeflate's crc32 (≈10 GB/s here; zlib's
    /// ≈1.5 GB/s) would otherwise cost about as much as the file read itself. Damage that keeps all of those (bit rot under an unchanged
    /// inode, or a same-size rewrite within one kernel timestamp tick of the verification) is caught by the next
    /// process to read the blob, or by `verify(repair:)`, which always reads everything. Inline bodies are always
    /// checked.
    /// - Throws: `CacheStoreError.Code.io` on a mismatch.
    func verify(_ body: Data, of row: IndexRow, identity: BlobFiles.FileIdentity?) throws(CacheStoreError) {
        guard Int64(body.count) == row.info.bodySize else {
            throw CacheStoreError(.io, "size mismatch: stored \(row.info.bodySize), read \(body.count)")
        }
        if let blob = row.blobID, let identity, verifiedBlobs.withLock({ $0[blob] == identity }) { return }
        let crc = BlobFiles.checksum(body)
        guard crc == row.info.checksum else {
            throw CacheStoreError(.io, "checksum mismatch: stored \(row.info.checksum), computed \(crc)")
        }
        if let blob = row.blobID, let identity { rememberVerified(blob, identity: identity) }
    }

    /// Checks the blob file of `row` (which has `blob`) against the row's size on every call and its crc32 (streamed
    /// from the file) unless this version of the file was verified already — the cache `verify(_:of:identity:)` uses.
    /// - Throws: `CacheStoreError` — `.io` on a mismatch, `.notFound` when the file is missing, `.io` on a read error.
    func verifyBlobFile(_ blob: String, of row: IndexRow) throws(CacheStoreError) {
        let identity = try files.checkBlob(blob, expectedSize: row.info.bodySize, checksum: row.info.checksum) {
            identity in verifiedBlobs.withLock { $0[blob] == identity }
        }
        if let identity { rememberVerified(blob, identity: identity) }
    }

    /// Records that blob `blob` matched its row while the file had `identity` (bounded: cleared when full).
    func rememberVerified(_ blob: String, identity: BlobFiles.FileIdentity) {
        verifiedBlobs.withLock { verified in
            if verified.count >= 100_000 { verified.removeAll(keepingCapacity: true) }
            verified[blob] = identity
        }
    }

    /// The blob file holding `key`'s body, or nil when the body is stored inline or the entry is absent.
    /// The file is immutable; its checksum is not re-verified here (``verifiedBodyFileURL(for:matching:)`` does).
    /// - Parameter refreshingAccessTime: whether the call counts as a use of the entry (its last-access time, and
    ///   so its LRU position, is refreshed); inspection passes false.
    public func bodyFileURL(for key: StoreKey, refreshingAccessTime: Bool = true) -> URL? {
        let now = configuration.currentTime()
        defer { flushAccountingIfDue(now: now) }
        let generationNow = generation.isShared ? generation.current : nil
        do {
            return try withIndex { (index: StoreIndex) throws(CacheStoreError) -> URL? in
                guard let row = try index.row(for: key, withBody: false, generation: generationNow),
                      let blob = row.blobID else { return nil }
                if refreshingAccessTime && !isReadOnly { index.pendingTouches[key] = now.timeIntervalSince1970 }
                return URL(fileURLWithPath: files.blobPath(blob), isDirectory: false)
            }
        } catch {
            log("bodyFileURL(\(key)) failed: \(error)")
            return nil
        }
    }

    /// Counts a lookup a caller resolved itself (through ``variants(forPrimaryKey:)`` / ``bodyFileURL(for:)``, which
    /// count nothing) as a disk-tier hit or miss, so ``statistics`` reflects what callers found. ``entry(for:)``
    /// counts its own lookups; don't record those again. No I/O beyond the periodic counter flush.
    public func recordLookup(hit: Bool) {
        if hit { diskHits.add(1, ordering: .relaxed) } else { diskMisses.add(1, ordering: .relaxed) }
        flushAccountingIfDue(now: configuration.currentTime())
    }

    /// ``variants(forPrimaryKey:)`` read through the index connection, so `lastAccessedAt` includes the access
    /// times this process recorded and has not written yet (for inspection; a lookup does not need them).
    package func variantsWithPendingAccessTimes(forPrimaryKey primary: String) -> [EntryInfo] {
        variants(of: primary, onReader: false)
    }

    /// Every stored variant of `primary`, ordered by variant; `[]` when none or unreadable. Read through the
    /// reader connection, which no commit holds: `lastAccessedAt` is the committed access time (this process's
    /// newer ones are written with its next commit, at the latest within ``accountingFlushInterval`` seconds).
    public func variants(forPrimaryKey primary: String) -> [EntryInfo] {
        variants(of: primary, onReader: true)
    }

    /// The variants of `primary` read on the reader connection (``withReader(_:)``) or the index's; `[]` (logged)
    /// when unreadable.
    private func variants(of primary: String, onReader: Bool) -> [EntryInfo] {
        let read = { (index: StoreIndex) throws(CacheStoreError) -> [EntryInfo] in try index.variants(of: primary).map(\.info) }
        do {
            return try onReader ? withReader(read) : withIndex(read)
        } catch {
            log("variants(\(primary)) failed: \(error)")
            return []
        }
    }

    /// Every stored entry, ordered by key; `[]` when the index is unreadable.
    public func allEntries() -> [EntryInfo] {
        do {
            return try withIndex { (index: StoreIndex) throws(CacheStoreError) -> [EntryInfo] in
                try index.completeRows().map(\.info)
            }
        } catch {
            log("allEntries failed: \(error)")
            return []
        }
    }

    /// Deletes `key`'s row if it still uses `blobID` (a concurrent replacement is kept), and the blob file.
    /// A read-only or closed store only forgets the entry from memory. A pinned row's pin is remembered for the
    /// entry stored next under its primary key (``pinsOfDroppedEntries``).
    func drop(_ key: StoreKey, blobID: String?) {
        memory.remove(key)
        guard !isReadOnly, !closedFlag.load(ordering: .relaxed) else { return }
        do {
            let removed = try writeTransaction { (index: StoreIndex) throws(CacheStoreError) -> [RemovedRow] in
                try index.delete(key, ifBlobIs: blobID)
            }
            if removed.contains(where: \.pinned) {
                pinsOfDroppedEntries.withLock { _ = $0.insert(key.primary) }
            }
        } catch {
            log("could not delete bad entry \(key): \(error)")
        }
        if let blobID { files.removeBlob(blobID) }
    }

    /// A snapshot of the counters: entries and disk bytes from the index, this instance's memory tier, and hit
    /// and miss counts since the cache was created plus this instance's own (`sinceOpen`); see
    /// `CacheStoreStatistics`. After `close()`, the snapshot taken when closing.
    public var statistics: CacheStoreStatistics {
        if let final = finalStatistics.withLock({ $0 }) { return final }
        return index.withLock { (slot: inout StoreIndex?) -> CacheStoreStatistics in makeStatistics(slot) }
    }
}
