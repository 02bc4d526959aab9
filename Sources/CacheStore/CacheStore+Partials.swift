import Foundation
import CacheSystem

/// What the index knows about a partial entry: the first bytes of a body whose transfer did not finish, kept so
/// the next transfer can ask only for the rest.
public struct PartialEntryInfo: Sendable, Hashable {
    /// The key the complete response would be stored under.
    public var key: StoreKey
    /// The caller's metadata bytes (the HTTP layer stores the response head here), returned unchanged.
    public var metadata: Data
    /// Bytes of the body on disk whose crc32 is recorded: only these count when the transfer is resumed.
    public var verifiedBytes: Int64
    /// True while a transfer of a live store is writing the body.
    public var isInProgress: Bool
    /// When the partial was started.
    public var createdAt: Date
    /// When its transfer last recorded progress; eviction of partials and `maxAge` use it.
    public var lastAccessedAt: Date
}

/// Partial entries: a body being received is registered under its key as soon as its response head is known
/// (``beginPartial(_:metadata:for:)``), its verified prefix is recorded every few megabytes
/// (``checkpointPartial(_:)``: the bytes since the last checkpoint are read back into the running crc32, after an
/// fsync with ``Durability/powerLoss``), and a transfer that stops early leaves it behind
/// (``keepPartial(_:)``). A later transfer continues the same file (``resumePartial(for:)``) and commits it as a
/// complete entry with ``commit(_:metadata:for:storageClass:pinned:)``, which deletes the partial in the same
/// transaction.
///
/// A partial lives in `tmp/` under the name its row records; recovery at an exclusive open keeps such a file,
/// cut to its verified length, and deletes every other file there. Partials count against `maxDiskBytes` and
/// are evicted before any complete entry; one never causes a complete entry to be evicted. A store that cannot
/// write (read-only, closed, unavailable) has none: every call here is then a no-op returning nil/empty/false.
extension CacheStore {
    /// Registers `writer`'s file as the partial of `key`, owned by this store until ``keepPartial(_:)``; its
    /// verified bytes are those the writer has counted (0, or the resumed prefix). An idle partial of `key` is
    /// replaced and its file deleted; one a live transfer is writing (of this process or another live one) is
    /// left alone, and then `writer`'s body is not kept as a partial: returns false (the transfer goes on, its
    /// body can still be committed whole).
    /// - Throws: `CacheStoreError` from the index; `.permissionDenied` (read-only), `.invalidArgument` (closed).
    @discardableResult
    public func beginPartial(_ writer: BodyWriter, metadata: Data, for key: StoreKey) throws(CacheStoreError) -> Bool {
        let now = configuration.currentTime().timeIntervalSince1970
        let row = PartialRow(key: key, metadata: metadata, file: writer.name, verified: writer.bytesWritten,
                             crc: writer.state.withLock { $0.crc }, owner: sessionMarker, created: now, accessed: now)
        let live = Set(BlobFiles.list(files.handles.sessions)).union(sessionMarker.map { [$0] } ?? [])
        let outcome = try writeTransaction { (index: StoreIndex) throws(CacheStoreError) -> (kept: Bool, replaced: String?) in
            if let old = try index.partial(for: key), old.file != row.file, let owner = old.owner, live.contains(owner) {
                return (false, nil)
            }
            return (true, try index.upsertPartial(row))
        }
        if let replaced = outcome.replaced { files.removeTemporary(replaced) }
        return outcome.kept
    }

    /// Records how much of `writer`'s partial is verified now (``BodyWriter/checkpoint(sync:)``); returns that
    /// count, or nil when the partial is no longer kept: removed meanwhile (evicted, purged), over
    /// `partialByteLimit`, or over `maxDiskBytes` once every other idle partial was evicted. The transfer goes on
    /// either way.
    /// - Throws: `CacheStoreError` from the checkpoint or the index.
    @discardableResult
    public func checkpointPartial(_ writer: BodyWriter) throws(CacheStoreError) -> Int64? {
        try requireWritable()
        let (verified, crc) = try writer.checkpoint(sync: configuration.durability == .powerLoss)
        if let limit = configuration.partialByteLimit, verified > limit {
            try dropPartial(file: writer.name)
            return nil
        }
        let now = configuration.currentTime().timeIntervalSince1970
        let evicted = try writeTransaction { (index: StoreIndex) throws(CacheStoreError) -> [String]? in
            guard try index.updatePartial(file: writer.name, verified: verified, crc: crc, owner: sessionMarker,
                                          accessed: now) > 0 else { return nil }
            return try evictPartials(index, keeping: writer.name)
        }
        guard let evicted else { return nil }
        for file in evicted where file != writer.name { files.removeTemporary(file) }
        return evicted.contains(writer.name) ? nil : verified
    }

    /// Ends this store's transfer into `writer` and leaves its verified prefix as the partial of its key (the
    /// file is kept; the writer is detached). Returns the verified bytes kept, or nil when nothing is kept (no
    /// partial row any more, nothing verified, or the store cannot write): then the file is deleted.
    public func keepPartial(_ writer: BodyWriter) -> Int64? {
        do {
            guard let verified = try checkpointPartial(writer), verified > 0 else {
                try? dropPartial(file: writer.name)
                writer.abort()
                return nil
            }
            let crc = writer.state.withLock { $0.crc }
            let now = configuration.currentTime().timeIntervalSince1970
            let kept = try writeTransaction { (index: StoreIndex) throws(CacheStoreError) -> Int in
                try index.updatePartial(file: writer.name, verified: verified, crc: crc, owner: nil, accessed: now)
            }
            guard kept > 0 else {
                writer.abort()
                return nil
            }
            // Bytes past the verified prefix (written after the last read-back) are cut by the next resume.
            writer.detach()
            return verified
        } catch {
            log("cannot keep the partial body \(writer.name): \(error)")
            try? dropPartial(file: writer.name)
            writer.abort()
            return nil
        }
    }

    /// The partial of `key`, or nil.
    public func partial(for key: StoreKey) -> PartialEntryInfo? {
        guard !isUnavailable else { return nil }
        let row = try? withReader { (index: StoreIndex) throws(CacheStoreError) -> PartialRow? in try index.partial(for: key) }
        return (row ?? nil).map(Self.info)
    }

    /// Every partial of `primary`, ordered by variant.
    public func partials(forPrimaryKey primary: String) -> [PartialEntryInfo] {
        guard !isUnavailable else { return [] }
        let rows = try? withReader { (index: StoreIndex) throws(CacheStoreError) -> [PartialRow] in try index.partials(of: primary) }
        return (rows ?? []).map(Self.info)
    }

    /// Every partial of the namespace, least recently used first.
    public func allPartials() -> [PartialEntryInfo] {
        guard !isUnavailable else { return [] }
        let rows = try? withIndex { (index: StoreIndex) throws(CacheStoreError) -> [PartialRow] in try index.allPartials() }
        return (rows ?? []).map(Self.info)
    }

    /// A writer that continues the partial of `key`: its file opened for appending after the verified prefix
    /// (anything past it cut off), that prefix's crc32 checked against the recorded one and carried on, the
    /// partial owned by this store. Register the new response head with ``beginPartial(_:metadata:for:)`` or
    /// commit it as the complete body; ``BodyWriter/abort()`` deletes the partial's file.
    ///
    /// Returns nil when `key` has no partial, a live transfer (of any process) is writing it, or the file is gone,
    /// shorter than its verified prefix, or fails the checksum (then the partial is deleted).
    /// - Throws: `CacheStoreError` from the index; `.permissionDenied` (read-only), `.invalidArgument` (closed).
    public func resumePartial(for key: StoreKey) throws(CacheStoreError) -> BodyWriter? {
        try requireWritable()
        guard let marker = sessionMarker else { return nil }
        let live = Set(BlobFiles.list(files.handles.sessions))
        let claimed = try writeTransaction { (index: StoreIndex) throws(CacheStoreError) -> PartialRow? in
            guard let row = try index.partial(for: key),
                  try index.claimPartial(file: row.file, owner: marker, liveOwners: live) else { return nil }
            return row
        }
        guard let row = claimed else { return nil }
        if let problem = implausibility(of: row) {
            log("partial of \(key.primary) \(problem): removed")
            try dropPartial(file: row.file)
            files.removeTemporary(row.file)  // deletes nothing for a name the store does not make
            return nil
        }
        let path = files.tmpPath + "/" + row.file
        // Checked on the open descriptor before any cut or write: a hard link planted at the name is dropped
        // (only the name in tmp/ is removed, the other file is left as it is).
        let fd: Int32
        let info: cs_file_info
        switch files.openPartial(row.file) {
        case .success(let opened): (fd, info) = opened
        case .failure(let error):
            log("\(error.detail): removed")
            try dropPartial(file: row.file)
            if error.code != .notFound { files.removeTemporary(row.file) }
            return nil
        }
        do throws(CacheStoreError) {
            if let shortfall = Self.shortfall(of: row, size: info.size, path: path) { throw CacheStoreError(.io, shortfall) }
            if info.size > row.verified, cs_truncate(fd, row.verified) != 0 {
                throw CacheStoreError.posix(cs_errno(), "truncate \(path)")
            }
            guard try Self.verifiedPrefixMatches(fd, row, path: path) else {
                throw CacheStoreError(.io, "partial \(path) fails its checksum")
            }
            guard cs_seek(fd, row.verified) == 0 else { throw CacheStoreError.posix(cs_errno(), "seek \(path)") }
        } catch {
            _ = cs_close(fd)
            log("\(error.detail): removed")
            try dropPartial(file: row.file)
            files.removeTemporary(row.file)
            return nil
        }
        return BodyWriter(fd: fd, name: row.file, files: files, storeID: ObjectIdentifier(self),
                          verified: row.verified, crc: row.crc)
    }

    /// Why `row` cannot be a partial the store wrote, judged from the row alone, or nil: its file must have a name
    /// the store makes in `tmp/` (any other — an edited index: `../x` — is never opened, cut or deleted), and its
    /// verified count must be within `partialByteLimit`, which no partial grows past (``checkpointPartial(_:)``
    /// drops it): a larger one is dropped without reading the file (a planted sparse file would take as long
    /// as it is big).
    func implausibility(of row: PartialRow) -> String? {
        guard BlobFiles.isBlobName(row.file) else { return "names no file of tmp/" }
        if let limit = configuration.partialByteLimit, row.verified > limit || row.verified < 0 {
            return "claims \(row.verified) verified bytes, over the partial limit \(limit)"
        }
        return nil
    }

    /// Why a partial file of `size` bytes cannot hold `row`'s verified prefix, or nil when it is long enough.
    static func shortfall(of row: PartialRow, size: Int64, path: String) -> String? {
        size >= row.verified ? nil : "partial \(path) is shorter (\(size) bytes) than its \(row.verified) verified bytes"
    }

    /// Whether the first `row.verified` bytes of the open file `fd` have the crc32 `row` recorded.
    /// - Throws: `CacheStoreError` when the file cannot be read.
    static func verifiedPrefixMatches(_ fd: Int32, _ row: PartialRow, path: String) throws(CacheStoreError) -> Bool {
        let (count, crc) = try BlobFiles.checksum(fd: fd, from: 0, count: row.verified, seed: 0, path: path)
        return count == row.verified && crc == row.crc
    }

    /// Deletes the partial of `key` and its file (nothing when there is none). A transfer still writing it goes
    /// on, but its bytes are no longer kept.
    /// - Throws: `CacheStoreError` from the index; `.permissionDenied` (read-only), `.invalidArgument` (closed).
    public func removePartial(for key: StoreKey) throws(CacheStoreError) {
        let removed = try writeTransaction { (index: StoreIndex) throws(CacheStoreError) -> PartialRow? in
            guard let row = try index.partial(for: key) else { return nil }
            try index.deletePartial(key)
            return row
        }
        // A file a transfer is writing is that transfer's to delete or commit; recovery deletes it after a crash.
        if let removed, removed.owner == nil { files.removeTemporary(removed.file) }
    }

    /// Deletes the partial row naming `writer`'s file, leaving the file to the writer (its body was committed,
    /// handed to the caller, or replaced by another response). Nothing when there is none; errors are logged.
    public func forgetPartial(_ writer: BodyWriter) {
        guard !isReadOnly, !isUnavailable else { return }
        // Usually the commit of the body already deleted the row: a read spares the write transaction.
        let named = try? withIndex { (index: StoreIndex) throws(CacheStoreError) -> Bool in
            try index.partialNamed(writer.name) != nil
        }
        guard named ?? true else { return }
        do { try dropPartial(file: writer.name) } catch { log("cannot forget the partial \(writer.name): \(error)") }
    }

    /// Deletes the partial row naming `file` (the file itself is its writer's to delete).
    func dropPartial(file: String) throws(CacheStoreError) {
        try writeTransaction { (index: StoreIndex) throws(CacheStoreError) in
            _ = try index.deletePartial(file: file)
        }
    }

    /// Evicts idle partials (least recently used first, never `keeping` while others are left) until complete
    /// entries and partials together fit `maxDiskBytes`, then `keeping` itself when they still do not; returns
    /// the files of the evicted rows. Complete entries are never evicted for a partial.
    func evictPartials(_ index: StoreIndex, keeping: String?) throws(CacheStoreError) -> [String] {
        guard let maxBytes = configuration.maxDiskBytes else { return [] }
        let entryBytes = try index.totals().bytes
        var partialBytes = try index.partialBytes()
        // The totals row is read from a file another process may have damaged: a sum that overflows counts as
        // over the limit instead of trapping.
        func overLimit() -> Bool {
            let (sum, overflow) = entryBytes.addingReportingOverflow(partialBytes)
            return overflow || sum > maxBytes
        }
        guard overLimit() else { return [] }
        var evicted: [String] = []
        let candidates = try index.allPartials().filter { $0.owner == nil || $0.file == keeping }
        let ordered = candidates.filter { $0.file != keeping } + candidates.filter { $0.file == keeping }
        for row in ordered where overLimit() {
            try index.deletePartial(file: row.file)
            partialBytes -= min(max(row.verified, 0), partialBytes)
            evicted.append(row.file)
        }
        return evicted
    }

    static func info(_ row: PartialRow) -> PartialEntryInfo {
        PartialEntryInfo(key: row.key, metadata: row.metadata, verifiedBytes: row.verified, isInProgress: row.owner != nil,
                         createdAt: Date(timeIntervalSince1970: row.created),
                         lastAccessedAt: Date(timeIntervalSince1970: row.accessed))
    }
}
