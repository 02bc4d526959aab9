import Foundation
import CacheSystem

extension CacheStore {
    /// Stores `body` and `metadata` under `key`, replacing any previous entry (which gets a new blob id).
    ///
    /// Bodies up to `inlineThreshold` bytes go into the index; larger ones into a new file `blobs/<new id>` that
    /// no row names until the index transaction (shared with concurrent writers, see ``groupCommit(_:)``)
    /// commits its row — with `Durability.powerLoss` after an fsync of the file and of `blobs/`. When the call
    /// returns, the entry survives a crash of the process (and a power cut with `.powerLoss`; see ``Durability``);
    /// a process killed before that leaves at most a file no row names, which the next exclusive open deletes.
    /// A write that takes the store over a limit triggers an LRU sweep.
    /// - Returns: the stored entry's information.
    /// - Throws: `CacheStoreError` — `.diskFull`, `.permissionDenied` (also: the store is read-only), `.io`,
    ///   `.busy`, `.corruptIndex`, `.invalidArgument` (the store is closed), `.entryTooLarge` (over
    ///   ``Configuration/entryByteLimit``, or larger than the room the pinned entries leave,
    ///   ``roomBesidePinnedEntries(for:)``, decided in the commit's transaction: nothing committed or evicted);
    ///   on error the previous entry (if any) is
    ///   unchanged. The sweep after a write never evicts the entry just written.
    @discardableResult
    public func store(_ body: Data, metadata: Data, for key: StoreKey, storageClass: StorageClass = .permanent,
                      pinned: Bool = false) throws(CacheStoreError) -> EntryInfo {
        try storeReturningBodyFile(body, metadata: metadata, for: key, storageClass: storageClass, pinned: pinned).info
    }

    /// ``store(_:metadata:for:storageClass:pinned:)``, also giving the blob file the entry was stored in (nil for a
    /// body stored inline), so a caller that answers with the stored body's file needs no index read after the
    /// commit. The file is immutable; it disappears when the entry is replaced or evicted.
    /// - Throws: as ``store(_:metadata:for:storageClass:pinned:)``.
    package func storeReturningBodyFile(_ body: Data, metadata: Data, for key: StoreKey,
                                        storageClass: StorageClass = .permanent,
                                        pinned: Bool = false) throws(CacheStoreError) -> (info: EntryInfo, bodyFile: URL?) {
        let prepared = try prepareStore(body, metadata: metadata, for: key, storageClass: storageClass, pinned: pinned)
        defer { prepared.release() }
        try commitRow(prepared.commit)
        return prepared.result
    }

    /// ``storeReturningBodyFile(_:metadata:for:storageClass:pinned:)`` for async callers: the row is committed by
    /// the store's commit writer with the rows other tasks store meanwhile (one transaction for all of them), and the
    /// caller is suspended, not blocked, until it is. Same promise when it returns: the entry survives a crash of the
    /// process (and a power cut with `.powerLoss`).
    /// - Throws: as ``store(_:metadata:for:storageClass:pinned:)``.
    package func storeReturningBodyFile(_ body: Data, metadata: Data, for key: StoreKey,
                                        storageClass: StorageClass = .permanent,
                                        pinned: Bool = false) async throws(CacheStoreError) -> (info: EntryInfo, bodyFile: URL?) {
        let prepared = try prepareStore(body, metadata: metadata, for: key, storageClass: storageClass, pinned: pinned)
        defer { prepared.release() }
        try await commitRow(prepared.commit)
        return prepared.result
    }

    /// A body at hand made ready to commit: its row, and for a body over `inlineThreshold` its blob file
    /// `blobs/<new id>`, written and still open (with `Durability.powerLoss` its batch fsyncs the body through it),
    /// which no row names (no reader finds it) until the commit; no `tmp/` file and no rename.
    private func prepareStore(_ body: Data, metadata: Data, for key: StoreKey, storageClass: StorageClass,
                              pinned: Bool) throws(CacheStoreError) -> PreparedStore {
        try requireWritable()
        try requireWithinEntryLimit(Int64(body.count), key: key)
        let now = configuration.currentTime()
        let info = EntryInfo(key: key, metadata: metadata, bodySize: Int64(body.count),
                             checksum: BlobFiles.checksum(body), storageClass: storageClass,
                             isPinned: pinned || wasPinnedBeforeDrop(key),
                             createdAt: now, lastAccessedAt: now)
        let memoryEntry = StoredEntry(info: info, body: body)
        if body.count <= configuration.inlineThreshold {
            return PreparedStore(commit: RowCommit(row: IndexRow(info: info, blobID: nil, inlineBody: body),
                                                   memoryEntry: memoryEntry),
                                 result: (info, nil), release: {})
        }
        let id = BlobFiles.newID()
        // In `blobs/` but not yet in the index: `verify(repair:)` must not take it for an orphan.
        inFlightBlobs.withLock { _ = $0.insert(id) }
        let forget = { [self] in inFlightBlobs.withLock { _ = $0.remove(id) } }
        let fd: Int32
        do {
            fd = try files.createBlob(id, holding: body)
        } catch {
            memory.remove(key)
            forget()
            throw error
        }
        do {
            try fault("tmp-written")
            try fault("tmp-synced")
        } catch {
            _ = cs_close(fd)
            cleanUp { files.removeBlob(id) }
            memory.remove(key)
            forget()
            throw error
        }
        let commit = RowCommit(row: IndexRow(info: info, blobID: id, inlineBody: nil), newBlob: id, step: "blob-renamed",
                               memoryEntry: memoryEntry,
                               syncDescriptor: configuration.durability == .powerLoss ? fd : -1)
        return PreparedStore(commit: commit, result: (info, URL(fileURLWithPath: files.blobPath(id), isDirectory: false)),
                             release: { _ = cs_close(fd); forget() })
    }

    /// A writer that streams a body into `tmp/` chunk by chunk; commit it with
    /// `commit(_:metadata:for:storageClass:pinned:)` or `abort()` it. Its file is created on the first byte
    /// written (see ``BodyWriter``), so errors of the create come from the first write.
    /// - Throws: `CacheStoreError` — `.permissionDenied` for a read-only store, `.invalidArgument` for a closed one.
    public func makeBodyWriter() throws(CacheStoreError) -> BodyWriter {
        try requireWritable()
        return BodyWriter(name: BlobFiles.newID(), files: files, storeID: ObjectIdentifier(self))
    }

    /// Stores the body in `writer`'s file under `key` by renaming it into `blobs/` (no copy; any size).
    ///
    /// Size and checksum come from the chunks written, or from reading the file when the caller wrote or moved a
    /// file to `writer.fileURL` itself. Bodies up to `inlineThreshold` bytes are moved into the index instead.
    /// - Returns: the stored entry's information.
    /// - Throws: `CacheStoreError` — `.invalidArgument` for a writer of another store or one already finished, or
    ///   a closed store (the writer is aborted), `.notFound` when the file is gone, `.diskFull`, `.io`, `.busy`;
    ///   `.entryTooLarge` when the body is over ``Configuration/entryByteLimit`` or larger than the room the
    ///   pinned entries leave (``roomBesidePinnedEntries(for:)``, decided in the commit's transaction; the detail
    ///   then contains ``pinnedRoomWords``): nothing committed or evicted, the writer's file is left for the
    ///   caller to reclaim or abort.
    @discardableResult
    public func commit(_ writer: BodyWriter, metadata: Data, for key: StoreKey,
                       storageClass: StorageClass = .permanent, pinned: Bool = false) throws(CacheStoreError) -> EntryInfo {
        guard writer.storeID == ObjectIdentifier(self) else {
            throw CacheStoreError(.invalidArgument, "body writer belongs to another CacheStore")
        }
        do {
            try requireWritable()
        } catch {
            writer.abort()
            throw error
        }
        do {
            try fault("tmp-written")
        } catch {
            cleanUp { writer.abort() }
            throw error
        }
        // Over the entry limit: refused before anything is committed or evicted. The file stays where it is, so
        // the caller can still deliver it (and then aborts the writer).
        let pendingSize = BlobFiles.info(files.handles.tmp, writer.name)?.size ?? 0
        try requireWithinEntryLimit(max(writer.bytesWritten, pendingSize), key: key)
        let (size, crc, readBack) = try writer.finish(sync: configuration.durability == .powerLoss)
        // The file whose size and crc32 `finish` just computed (it read back what was not yet counted); nil when
        // part of the crc32 came from memory: the first read of the blob checks it against the file.
        let finished = readBack ? BlobFiles.info(files.handles.tmp, writer.name) : nil
        let now = configuration.currentTime()
        let info = EntryInfo(key: key, metadata: metadata, bodySize: size, checksum: crc, storageClass: storageClass,
                             isPinned: pinned || wasPinnedBeforeDrop(key), createdAt: now, lastAccessedAt: now)
        do {
            try fault("tmp-synced")
        } catch {
            cleanUp { files.removeTemporary(writer.name) }
            throw error
        }
        if size <= Int64(configuration.inlineThreshold) {
            let body: Data
            do {
                body = try writer.readSmallFile(size: size)
            } catch {
                files.removeTemporary(writer.name)
                throw error
            }
            guard BlobFiles.checksum(body) == crc else {
                files.removeTemporary(writer.name)
                throw CacheStoreError(.io, "\(writer.path) changed while being committed")
            }
            do {
                try commitRow(IndexRow(info: info, blobID: nil, inlineBody: body), newBlob: nil,
                              memoryEntry: StoredEntry(info: info, body: body))
            } catch {
                // Refused beside the pinned entries: the file stays for the caller to deliver.
                if error.code != .entryTooLarge { files.removeTemporary(writer.name) }
                throw error
            }
            files.removeTemporary(writer.name)
        } else {
            try commitFile(temporary: writer.name, info: info, memoryEntry: nil, finished: finished)
        }
        return info
    }

    /// Renames the finished temporary file `tmp/<name>` into `blobs/` under a new id and commits its row (the
    /// row's batch fsyncs `blobs/` first with ``Durability/powerLoss``; see ``groupCommit(_:)``).
    ///
    /// `finished`: the temporary file as it was when its checksum was computed. When the blob is still that file
    /// after the rename (device, inode, size and modification time; the rename changes only its ctime), it counts
    /// as verified in this process (``rememberVerified(_:identity:)``): reading back a body just stored does not
    /// compute its crc32 a second time.
    func commitFile(temporary name: String, info: EntryInfo, memoryEntry: StoredEntry?,
                    finished: cs_file_info? = nil) throws(CacheStoreError) {
        let id = BlobFiles.newID()
        // Named in `blobs/` but not yet in the index: `verify(repair:)` must not take it for an orphan.
        inFlightBlobs.withLock { _ = $0.insert(id) }
        defer { inFlightBlobs.withLock { _ = $0.remove(id) } }
        do {
            try files.moveIntoBlobs(temporary: name, id: id)
        } catch {
            cleanUp { files.removeTemporary(name) }
            memory.remove(info.key)
            throw error
        }
        if let finished, let renamed = BlobFiles.info(files.handles.blobs, id), renamed.isRegular,
           renamed.device == finished.device, renamed.inode == finished.inode, renamed.size == info.bodySize,
           finished.size == info.bodySize, renamed.modified_ns == finished.modified_ns {
            rememberVerified(id, identity: BlobFiles.FileIdentity(renamed))
        }
        do {
            try commitRow(IndexRow(info: info, blobID: id, inlineBody: nil), newBlob: id, step: "blob-renamed",
                          memoryEntry: memoryEntry, keepsRefusedBlob: true)
        } catch {
            // Refused beside the pinned entries: the file goes back to `tmp/<name>`, where the caller's writer
            // finds it to deliver (or abort); removed when that is impossible.
            if error.code == .entryTooLarge, cs_rename_at(files.handles.blobs, id, files.handles.tmp, name) != 0 {
                files.removeBlob(id)
            }
            throw error
        }
    }

    /// Runs `action` unless a fault-injection test asked to leave the debris of a "dead" process behind.
    func cleanUp(_ action: () -> Void) {
        if !(configuration.faultSkipsCleanup && configuration.faultInjection != nil) { action() }
    }

    /// Commits `row` with the rows other callers are committing at the same time (``groupCommit(_:)``), updates
    /// the memory tier (write-through), deletes the replaced blob, then sweeps when over a limit.
    /// - Throws: `CacheStoreError`; `newBlob` is deleted when the row could not be committed.
    /// `keepsRefusedBlob`: a row refused with `.entryTooLarge` leaves `newBlob` for the caller to move back.
    func commitRow(_ row: IndexRow, newBlob: String?, step: String? = nil,
                   memoryEntry: StoredEntry?, syncDescriptor: Int32 = -1,
                   keepsRefusedBlob: Bool = false) throws(CacheStoreError) {
        try commitRow(RowCommit(row: row, newBlob: newBlob, step: step, memoryEntry: memoryEntry,
                                syncDescriptor: syncDescriptor, keepsRefusedBlob: keepsRefusedBlob))
    }

    /// ``commitRow(_:newBlob:step:memoryEntry:syncDescriptor:keepsRefusedBlob:)`` of `commit`.
    func commitRow(_ commit: RowCommit) throws(CacheStoreError) {
        let outcome = Result { () throws(CacheStoreError) -> CommitOutcome in
            if let step = commit.step { try fault(step) }
            return try groupCommit(PendingCommit(row: commit.row, syncDescriptor: commit.syncDescriptor))
        }
        try finishRow(commit, outcome)
    }

    /// ``commitRow(_:)`` for async callers: the row goes to the commit writer (async ``groupCommit(_:)``).
    func commitRow(_ commit: RowCommit) async throws(CacheStoreError) {
        let outcome: Result<CommitOutcome, CacheStoreError>
        do throws(CacheStoreError) {
            if let step = commit.step { try fault(step) }
            outcome = .success(try await groupCommit(PendingCommit(row: commit.row, syncDescriptor: commit.syncDescriptor)))
        } catch {
            outcome = .failure(error)
        }
        try finishRow(commit, outcome)
    }

    /// What follows a row's group commit: on failure the memory tier forgets the key and the new blob is deleted
    /// (the error is rethrown); on success the memory tier takes the entry, the replaced blob and a superseded idle
    /// partial are deleted, and the store is swept when over a limit.
    private func finishRow(_ commit: RowCommit, _ result: Result<CommitOutcome, CacheStoreError>) throws(CacheStoreError) {
        let key = commit.row.info.key
        let outcome: CommitOutcome
        switch result {
        case .success(let committed): outcome = committed
        case .failure(let error):
            memory.remove(key)
            if let newBlob = commit.newBlob, !(commit.keepsRefusedBlob && error.code == .entryTooLarge) {
                cleanUp { files.removeBlob(newBlob) }
            }
            throw error
        }
        let (oldBlob, overLimit, idlePartial) = (outcome.oldBlob, outcome.overLimit, outcome.idlePartial)
        let newBlob = commit.newBlob
        // The memory tier of a closed store refuses the entry (``MemoryTier/close()``).
        if let memoryEntry = commit.memoryEntry { memory.insert(memoryEntry) } else { memory.remove(key) }
        if commit.row.info.isPinned { forgetDroppedPin(key.primary) }
        // Once the store is closed its directories are too: what the commit superseded is left as an orphan file
        // (`verify(repair:)` reports and deletes it; a row the closing store ran itself had its files deleted then,
        // see `runBatch(atClose:)`).
        let closed = closedFlag.load(ordering: .acquiring)
        if let idlePartial, !closed { files.removeTemporary(idlePartial) }
        do throws(CacheStoreError) {
            do {
                try fault("index-committed")
            } catch {
                if let oldBlob, oldBlob != newBlob { cleanUp { files.removeBlob(oldBlob) } }
                throw error
            }
            if let oldBlob, oldBlob != newBlob, !closed { files.removeBlob(oldBlob) }
            try fault("old-blob-removed")
        } catch {
            memory.remove(key)
            throw error
        }
        if overLimit, !closed {
            do {
                try enforceLimits(now: configuration.currentTime(), includeAge: false, keeping: key)
            } catch {
                log("sweep after writing \(key) failed: \(error)")
            }
        }
    }

    /// Whether `key`'s primary key had a pinned entry this store dropped as damaged (``pinsOfDroppedEntries``):
    /// the body stored for it now replaces that entry and keeps its pin.
    func wasPinnedBeforeDrop(_ key: StoreKey) -> Bool {
        pinsOfDroppedEntries.withLock { $0.contains(key.primary) }
    }

    /// Forgets the pin remembered for `primary` (stored again, or removed).
    func forgetDroppedPin(_ primary: String) {
        pinsOfDroppedEntries.withLock { _ = $0.remove(primary) }
    }

    /// Throws `.entryTooLarge` when a body of `size` bytes is over ``Configuration/entryByteLimit``. Whether it fits
    /// beside the pinned entries is decided inside its commit's transaction (``pinnedRoomRefusal(size:key:index:)``),
    /// where no other write can change the answer and no extra index lock is taken.
    func requireWithinEntryLimit(_ size: Int64, key: StoreKey) throws(CacheStoreError) {
        if let limit = configuration.entryByteLimit, size > limit {
            throw CacheStoreError(.entryTooLarge, "\(key): \(size) bytes, over the \(limit)-byte entry limit")
        }
    }

    /// The words of an `.entryTooLarge` refusal's detail that say the body does not fit beside the pinned entries.
    public static let pinnedRoomWords = "the pinned entries leave of the disk limit"

    /// Why a body of `size` bytes stored under `key` is refused because of the pinned entries, nil when it fits:
    /// read in the commit's transaction. The detail names the sizes, e.g. `body of 300000 bytes does not fit in
    /// the 100000 bytes the pinned entries leave of the disk limit (maxDiskBytes 500000)`.
    /// - Throws: `CacheStoreError` from SQLite.
    func pinnedRoomRefusal(size: Int64, key: StoreKey, index: StoreIndex) throws(CacheStoreError) -> String? {
        let maxBytes = configuration.maxDiskBytes
        let maxCount = configuration.maxEntryCount.flatMap { $0 > 0 ? $0 : nil }
        guard maxBytes != nil || maxCount != nil else { return nil }
        let pinned = try index.pinnedTotals()
        let replaced = pinned.entries > 0 ? try index.pinnedSize(of: key) : nil
        let room = Self.room(besidePinned: pinned, replaced: replaced, maxBytes: maxBytes, maxCount: maxCount)
        if let bytes = room.bytes, size > bytes {
            return "body of \(size) bytes does not fit in the \(bytes) bytes \(Self.pinnedRoomWords) "
                + "(maxDiskBytes \(maxBytes ?? 0))"
        }
        if room.entries == 0 {
            return "the pinned entries fill the entry count limit (maxEntryCount \(maxCount ?? 0))"
        }
        return nil
    }

    /// What the pinned entries leave of the limits for a new body stored under `key`, which replaces that key's
    /// entry (so a pinned entry of `key` itself does not count): `bytes` of `maxDiskBytes` (nil when unlimited)
    /// and `entries` of `maxEntryCount` (nil when unlimited, or set to 0 or less: such a limit refuses nothing,
    /// its sweeps evict), never below 0. Pinned entries are never evicted, so a body larger than `bytes` (or any
    /// body when `entries` is 0) is refused by its commit (`.entryTooLarge`). One read of the index (the pinned
    /// totals are kept by triggers); a commit decides again in its own transaction.
    /// - Throws: `CacheStoreError` — `.io`, `.busy`, `.corruptIndex`, `.invalidArgument` (closed store).
    public func roomBesidePinnedEntries(for key: StoreKey) throws(CacheStoreError) -> (bytes: Int64?, entries: Int?) {
        let maxBytes = configuration.maxDiskBytes
        let maxCount = configuration.maxEntryCount.flatMap { $0 > 0 ? $0 : nil }
        guard maxBytes != nil || maxCount != nil else { return (nil, nil) }
        let (pinned, replaced) = try withIndex { (index: StoreIndex) throws(CacheStoreError) -> ((entries: Int, bytes: Int64), Int64?) in
            (try index.pinnedTotals(), try index.pinnedSize(of: key))
        }
        return Self.room(besidePinned: pinned, replaced: replaced, maxBytes: maxBytes, maxCount: maxCount)
    }

    /// The room `pinned` totals leave of `maxBytes` / `maxCount`, less `replaced` (the pinned size of the entry the
    /// new body replaces, nil when none). The totals are read from a file another process may have damaged:
    /// clamped, never trapping.
    static func room(besidePinned pinned: (entries: Int, bytes: Int64), replaced: Int64?, maxBytes: Int64?,
                     maxCount: Int?) -> (bytes: Int64?, entries: Int?) {
        let pinnedBytes = max(0, pinned.bytes - max(0, replaced ?? 0))
        let pinnedEntries = max(0, pinned.entries - (replaced == nil ? 0 : 1))
        let bytes = maxBytes.map { max(0, $0 - min($0, pinnedBytes)) }
        let entries = maxCount.map { max(0, $0 - min($0, pinnedEntries)) }
        return (bytes, entries)
    }

    /// True when `totals` exceed `maxDiskBytes` or `maxEntryCount`.
    func isOverLimit(_ totals: (entries: Int, bytes: Int64)) -> Bool {
        if let maxBytes = configuration.maxDiskBytes, totals.bytes > maxBytes { return true }
        if let maxCount = configuration.maxEntryCount, totals.entries > maxCount { return true }
        return false
    }

    /// Replaces the metadata of `key` without touching its body (freshening after a 304, RFC 9111 §4.3.4).
    /// - Throws: `CacheStoreError` — `.notFound` when `key` is not stored, `.io`, `.busy`, `.diskFull`;
    ///   `.permissionDenied` (read-only store), `.invalidArgument` (closed store).
    public func updateMetadata(_ metadata: Data, for key: StoreKey) throws(CacheStoreError) {
        let now = configuration.currentTime()
        let changed = try writeTransaction { (index: StoreIndex) throws(CacheStoreError) -> Int in
            try index.updateMetadata(metadata, accessed: now.timeIntervalSince1970, for: key)
        }
        guard changed > 0 else { throw CacheStoreError(.notFound, "no entry for \(key)") }
        memory.update(key) { info in
            info.metadata = metadata
            info.lastAccessedAt = now
        }
    }

    /// Pins or unpins `key`; pinned entries are never evicted by limits or age.
    /// - Throws: `CacheStoreError` — `.notFound` when `key` is not stored, `.io`, `.busy`;
    ///   `.permissionDenied` (read-only store), `.invalidArgument` (closed store).
    public func setPinned(_ pinned: Bool, for key: StoreKey) throws(CacheStoreError) {
        let changed = try writeTransaction { (index: StoreIndex) throws(CacheStoreError) -> Int in
            try index.setPinned(pinned, key: key)
        }
        guard changed > 0 else { throw CacheStoreError(.notFound, "no entry for \(key)") }
        memory.update(key) { $0.isPinned = pinned }
    }

    /// Pins or unpins every variant of `primary`.
    /// - Throws: `CacheStoreError` — `.notFound` when no variant is stored, `.io`, `.busy`;
    ///   `.permissionDenied` (read-only store), `.invalidArgument` (closed store).
    public func setPinned(_ pinned: Bool, forPrimaryKey primary: String) throws(CacheStoreError) {
        let changed = try writeTransaction { (index: StoreIndex) throws(CacheStoreError) -> Int in
            try index.setPinned(pinned, primary: primary)
        }
        guard changed > 0 else { throw CacheStoreError(.notFound, "no entry for primary key \(primary)") }
        memory.remove { $0.primary == primary }
    }

    /// Deletes `key` (doing nothing when it is absent).
    /// - Throws: `CacheStoreError` — `.io`, `.busy`, `.corruptIndex`;
    ///   `.permissionDenied` (read-only store), `.invalidArgument` (closed store).
    public func remove(_ key: StoreKey) throws(CacheStoreError) {
        memory.remove(key)
        forgetDroppedPin(key.primary)
        try deleteRows { (index: StoreIndex) throws(CacheStoreError) in try index.delete(key) }
        try removePartial(for: key)
    }

    /// Deletes every variant of `primary` (invalidation, RFC 9111 §4.4), partial entries included.
    /// - Throws: `CacheStoreError` — `.io`, `.busy`, `.corruptIndex`;
    ///   `.permissionDenied` (read-only store), `.invalidArgument` (closed store).
    public func removeAll(forPrimaryKey primary: String) throws(CacheStoreError) {
        memory.remove { $0.primary == primary }
        forgetDroppedPin(primary)
        try deleteRows(partialsOf: primary) { (index: StoreIndex) throws(CacheStoreError) in try index.deleteVariants(of: primary) }
    }

    /// Deletes every entry of this namespace, pinned ones and partial ones included.
    /// - Throws: `CacheStoreError` — `.io`, `.busy`, `.corruptIndex`;
    ///   `.permissionDenied` (read-only store), `.invalidArgument` (closed store).
    public func removeAll() throws(CacheStoreError) {
        memory.remove(where: nil)
        pinsOfDroppedEntries.withLock { $0.removeAll() }
        try deleteRows(partialsOf: .some(nil)) { (index: StoreIndex) throws(CacheStoreError) in try index.deleteAll() }
    }

    /// Runs the index deletion `delete` in one write transaction (with the partials of the primary key
    /// `partialsOf` when given, `.some(nil)` meaning every partial), then deletes the blob files of the rows it
    /// removed and the files of the idle partials; returns the keys of the complete rows.
    @discardableResult
    func deleteRows(partialsOf primary: String?? = nil,
                    _ delete: (StoreIndex) throws(CacheStoreError) -> [RemovedRow]) throws(CacheStoreError) -> [StoreKey] {
        let (removed, partialFiles) = try writeTransaction { (index: StoreIndex) throws(CacheStoreError) -> ([RemovedRow], [String]) in
            let rows = try delete(index)
            guard let primary else { return (rows, []) }
            return (rows, try index.deletePartials(of: primary))
        }
        for item in removed {
            if let blob = item.blobID { files.removeBlob(blob) }
        }
        for file in partialFiles { files.removeTemporary(file) }
        return removed.map(\.key)
    }
}

/// A row ready for ``CacheStore/commitRow(_:)``: the row, the blob file it names (nil for an inline body), the
/// fault step before it, the memory-tier entry it becomes, the descriptor its batch fsyncs (`.powerLoss`; -1 for
/// none), and whether a row refused with `.entryTooLarge` leaves its blob for the caller to move back.
struct RowCommit: Sendable {
    var row: IndexRow
    var newBlob: String? = nil
    var step: String? = nil
    var memoryEntry: StoredEntry?
    var syncDescriptor: Int32 = -1
    var keepsRefusedBlob = false
}

/// A body made ready to store (``CacheStore/storeReturningBodyFile(_:metadata:for:storageClass:pinned:)``): its row
/// commit, the caller's answer once committed, and what to release after the commit, whatever its outcome (the
/// blob file's descriptor, the blob's in-flight mark).
struct PreparedStore {
    let commit: RowCommit
    let result: (info: EntryInfo, bodyFile: URL?)
    let release: () -> Void
}
