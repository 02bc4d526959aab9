import Foundation
import CacheSystem
import Synchronization

/// A body being written into the store's `tmp/` directory, chunk by chunk, so that a body of any size never has
/// to sit in memory. Commit it with `CacheStore.commit(_:metadata:for:storageClass:pinned:)` or `abort()` it.
///
/// The file is created on the first byte written (or the first ``openDescriptor()``), so a writer that is never
/// written to costs no file creation: a response whose body arrives in memory never touches `tmp/`.
///
/// A caller may also put a finished file at `fileURL` itself (e.g. move a download there with `rename(2)`)
/// instead of calling `write(_:)`; the commit then computes size and checksum from the file, which must be a
/// regular file (a symbolic link put there is refused, never followed).
/// Thread-safe: calls are serialised by a lock.
public final class BodyWriter: Sendable {
    struct State {
        /// The open descriptor; -1 before the file is created and after commit, abort or detach.
        var fd: Int32 = -1
        /// Whether this writer created `tmp/<name>` (`O_CREAT | O_EXCL`); a name is never created twice.
        var created = false
        var bytesWritten: Int64 = 0
        var crc: UInt32 = 0
        /// The file's size at the last fsync (``checkpoint(sync:)``): bytes counted in memory may not be durable yet.
        var synced: Int64 = 0
        /// Some bytes were counted from memory by ``countWritten(_:at:)``: the crc32 is that of the bytes written,
        /// which the file holds only if nothing else wrote to it.
        var countedFromMemory = false
        var finished = false
    }

    /// The temporary file being written (`<directory>/<namespace>/tmp/<id>`).
    public let fileURL: URL
    let path: String
    /// The file's name in `tmp/`.
    let name: String
    let files: BlobFiles
    /// Identifies the store that made this writer.
    let storeID: ObjectIdentifier
    let state: Mutex<State>

    /// A writer for `tmp/<name>`: a fresh random name whose file is created on first use (`fd` -1), or the open
    /// file of a resumed partial whose first `verified` bytes have checksum `crc`.
    init(fd: Int32 = -1, name: String, files: BlobFiles, storeID: ObjectIdentifier, verified: Int64 = 0, crc: UInt32 = 0) {
        self.name = name
        self.files = files
        self.path = files.tmpPath + "/" + name
        self.fileURL = URL(fileURLWithPath: path, isDirectory: false)
        self.storeID = storeID
        self.state = Mutex(State(fd: fd, created: fd >= 0, bytesWritten: verified, crc: crc, synced: verified))
    }

    deinit {
        state.withLock { state in
            if state.fd >= 0 { _ = cs_close(state.fd) }
            if !state.finished { files.removeTemporary(name) }
        }
    }

    /// Bytes counted in the running checksum so far: appended through `write(_:)`, reported by
    /// ``countWritten(_:at:)``, taken over from a resumed partial, or read back by ``checkpoint(sync:)``.
    public var bytesWritten: Int64 { state.withLock { $0.bytesWritten } }

    /// Counts the bytes written through ``fileDescriptor`` since the last count into the running checksum: reads
    /// back (from the page cache) those ``countWritten(_:at:)`` was not told of, after an fsync when `sync`.
    /// Returns the bytes counted so far and their crc32 — the prefix of the file a partial may keep.
    /// - Throws: `CacheStoreError` from fstat, fsync or read; `.invalidArgument` after commit or abort.
    @discardableResult
    public func checkpoint(sync: Bool) throws(CacheStoreError) -> (verified: Int64, crc: UInt32) {
        try state.withLock { (state: inout State) throws(CacheStoreError) -> (verified: Int64, crc: UInt32) in
            guard !state.finished, state.fd >= 0 || !state.created else {
                throw CacheStoreError(.invalidArgument, "checkpoint of a body writer that was committed or aborted")
            }
            // No file yet: nothing was written.
            if state.fd < 0 { return (state.bytesWritten, state.crc) }
            var info = cs_file_info()
            guard cs_stat_fd(state.fd, &info) == 0 else { throw CacheStoreError.posix(cs_errno(), "fstat \(path)") }
            if sync, info.size > state.synced {
                try BlobFiles.sync(state.fd, path: path)
                state.synced = info.size
            }
            try countTail(&state, upTo: info.size)
            return (state.bytesWritten, state.crc)
        }
    }

    /// Empties the file and the running checksum to write a body again from byte 0 (a resumed transfer answered
    /// with the whole representation). Does nothing after commit or abort.
    public func restart() {
        state.withLock { state in
            guard !state.finished, state.fd >= 0 else { return }
            _ = cs_truncate(state.fd, 0)
            _ = cs_seek(state.fd, 0)
            state.bytesWritten = 0
            state.crc = 0
            state.synced = 0
            state.countedFromMemory = false
        }
    }

    /// Counts `bytes`, just written through ``fileDescriptor`` at file offset `offset` (in bytes), into the running
    /// checksum while they are in memory, so that neither ``checkpoint(sync:)`` nor the commit reads them back.
    /// Only the part continuing the counted prefix is counted: bytes before it were counted already (a rewrite of
    /// an overlap is not re-counted, as with a read-back), and bytes after a gap are left for the read-back, which
    /// starts at the counted prefix's end. Does nothing after commit, abort or detach.
    public func countWritten(_ bytes: UnsafeRawBufferPointer, at offset: Int64) {
        guard let base = bytes.baseAddress, offset >= 0 else { return }
        state.withLock { state in
            guard !state.finished, state.fd >= 0 else { return }
            let end = offset + Int64(bytes.count)
            guard offset <= state.bytesWritten, end > state.bytesWritten else { return }
            let skip = Int(state.bytesWritten - offset)
            state.crc = cs_crc32(state.crc, base + skip, bytes.count - skip)
            state.bytesWritten = end
            state.countedFromMemory = true
        }
    }

    /// Whether `bytes`, about to be written at file offset `offset` (bytes) through ``fileDescriptor``, agree with
    /// the counted prefix where they overlap it (a 206 starting before the bytes held must repeat them): the
    /// overlap is read from the file and compared. True when they do not overlap it; false when they differ or
    /// the overlap cannot be read, so two versions are never joined.
    public func overlapMatches(_ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Bool {
        guard let base = bytes.baseAddress, offset >= 0 else { return true }
        let counted = state.withLock { $0.bytesWritten }
        guard offset < counted else { return true }
        let count = Int(min(Int64(bytes.count), counted - offset))
        guard let reader = try? BlobFiles.openForReading(files.handles.tmp, name, path: path) else { return false }
        defer { _ = cs_close(reader) }
        let held = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        defer { held.deallocate() }
        guard let heldBase = held.baseAddress else { return false }
        var done = 0
        while done < count {
            let n = cs_read_at(reader, heldBase + done, count - done, offset + Int64(done))
            if n <= 0 { return false }
            done += Int(n)
        }
        return memcmp(heldBase, base, count) == 0
    }

    /// Reads the file from `state.bytesWritten` to `size` into the running checksum (through a descriptor opened
    /// for reading without following a link).
    private func countTail(_ state: inout State, upTo size: Int64) throws(CacheStoreError) {
        guard size > state.bytesWritten else { return }
        let reader = try BlobFiles.openForReading(files.handles.tmp, name, path: path)
        defer { _ = cs_close(reader) }
        let (count, crc) = try BlobFiles.checksum(fd: reader, from: state.bytesWritten, count: size - state.bytesWritten,
                                                  seed: state.crc, path: path)
        state.bytesWritten += count
        state.crc = crc
    }

    /// The descriptor of the file, creating it first (`O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600, relative to the
    /// store's open `tmp/` directory) when this writer has not yet.
    /// - Throws: `CacheStoreError` — `.invalidArgument` after commit, abort or detach; `.diskFull`,
    ///   `.permissionDenied`, `.io` from the create.
    private func descriptor(_ state: inout State) throws(CacheStoreError) -> Int32 {
        guard !state.finished else {
            throw CacheStoreError(.invalidArgument, "write to a body writer that was committed or aborted")
        }
        if state.fd >= 0 { return state.fd }
        guard !state.created else { throw CacheStoreError(.invalidArgument, "body writer's file was closed") }
        let fd = cs_open_file_at(files.handles.tmp, name, CS_OPEN_WRITE, CS_OPEN_CREATE_NEW, 0o600)
        guard fd >= 0 else { throw CacheStoreError.posix(cs_errno(), "create \(path)") }
        state.fd = fd
        state.created = true
        return fd
    }

    /// Appends `chunk` to the temporary file (created by the first non-empty chunk).
    /// - Throws: `CacheStoreError` — `.diskFull` on `ENOSPC`, `.invalidArgument` after commit or abort, `.io`.
    public func write(_ chunk: Data) throws(CacheStoreError) {
        try state.withLock { (state: inout State) throws(CacheStoreError) in
            guard !state.finished else {
                throw CacheStoreError(.invalidArgument, "write to a body writer that was committed or aborted")
            }
            if chunk.isEmpty { return }
            try BlobFiles.writeAll(try descriptor(&state), chunk, path: path)
            state.bytesWritten += Int64(chunk.count)
            state.crc = BlobFiles.checksum(chunk, seed: state.crc)
        }
    }

    /// The open descriptor of the temporary file (write access; created now if it was not yet, with
    /// `O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600, relative to the store's open `tmp/` directory), for a caller
    /// that streams the body itself (a transport writing a download). Bytes written through it are counted and
    /// checksummed by the commit, which reads the file back. Never close it yourself.
    /// - Throws: `CacheStoreError` — `.invalidArgument` after commit, abort or ``detach()``; `.diskFull`,
    ///   `.permissionDenied`, `.io` when the file cannot be created.
    public func openDescriptor() throws(CacheStoreError) -> Int32 {
        try state.withLock { (state: inout State) throws(CacheStoreError) -> Int32 in try descriptor(&state) }
    }

    /// A new descriptor reading the temporary file (opened relative to the store's open `tmp/` without following a
    /// link), for a reader that follows the body while it is written; the caller closes it. It stays readable
    /// after the file is committed (renamed into `blobs/`) or deleted.
    /// - Throws: `CacheStoreError` from the open (`.notFound` before the file is created).
    public func openReader() throws(CacheStoreError) -> Int32 {
        try BlobFiles.openForReading(files.handles.tmp, name, path: path)
    }

    /// ``openDescriptor()``, or -1 when it throws (after commit, abort or ``detach()``, or the file cannot be
    /// created).
    public var fileDescriptor: Int32 { (try? openDescriptor()) ?? -1 }

    /// The file's first `size` bytes, read without following a link (relative to the store's open `tmp/`).
    /// - Throws: `CacheStoreError` from open/read, `.io` when the file is not `size` bytes long.
    public func contents(size: Int64) throws(CacheStoreError) -> Data {
        // Nothing written and no file put at the name: the empty body.
        if size == 0, state.withLock({ !$0.created }), BlobFiles.info(files.handles.tmp, name) == nil { return Data() }
        return try readSmallFile(size: size)
    }

    /// Closes the file and gives it to the caller: neither ``abort()`` nor the writer's end deletes it any more
    /// (the store's recovery deletes `tmp/` debris at its next exclusive open). The writer cannot be committed.
    public func detach() {
        state.withLock { state in
            if state.fd >= 0 { _ = cs_close(state.fd) }
            state.fd = -1
            state.finished = true
        }
    }

    /// Deletes the temporary file; the writer cannot be used afterwards. Calling it twice is harmless.
    public func abort() {
        state.withLock { state in
            if state.fd >= 0 { _ = cs_close(state.fd) }
            state.fd = -1
            if !state.finished { files.removeTemporary(name) }
            state.finished = true
        }
    }

    /// Closes the file (after an fsync when `sync`) and returns its size and crc32 — the running values when the
    /// file at `path` is still the one written through `write(_:)`, else values computed by reading the file —
    /// and `readBack`: false when part of the crc32 was counted from memory (``countWritten(_:at:)``), so the
    /// file was not seen to hold those bytes.
    /// A writer that never created its file and finds none at its name creates it empty now, so the caller
    /// always finishes with a file. Marks the writer finished (the caller now owns the file).
    /// - Throws: `CacheStoreError` from create/fsync/read, `.invalidArgument` when already finished.
    func finish(sync: Bool) throws(CacheStoreError) -> (size: Int64, crc: UInt32, readBack: Bool) {
        try state.withLock { (state: inout State) throws(CacheStoreError) -> (size: Int64, crc: UInt32, readBack: Bool) in
            guard !state.finished else {
                throw CacheStoreError(.invalidArgument, "body writer was already committed or aborted")
            }
            if !state.created, BlobFiles.info(files.handles.tmp, name) == nil {
                // Nothing written and nothing put at the name: an empty body.
                _ = try descriptor(&state)
            }
            var written = cs_file_info()
            let fdValid = state.fd >= 0 && cs_stat_fd(state.fd, &written) == 0
            guard let current = BlobFiles.info(files.handles.tmp, name) else {
                throw CacheStoreError.posix(cs_errno(), "stat \(path)")
            }
            let sameFile = fdValid && written.inode == current.inode && written.device == current.device
                && current.size >= state.bytesWritten
            let result: (size: Int64, crc: UInt32, readBack: Bool)
            if sameFile {
                if sync { try BlobFiles.sync(state.fd, path: path) }
                // Bytes the transport wrote through the descriptor after the last checkpoint: only they are read.
                try countTail(&state, upTo: current.size)
                result = (state.bytesWritten, state.crc, !state.countedFromMemory)
            } else {
                // A file the caller put there: opened without following a link, regular files only.
                let fd = try BlobFiles.openForReading(files.handles.tmp, name, path: path)
                defer { _ = cs_close(fd) }
                let (size, crc) = try BlobFiles.sizeAndChecksum(fd: fd, path: path)
                result = (size, crc, true)
                if sync { _ = cs_sync(fd) }
            }
            if state.fd >= 0 { _ = cs_close(state.fd) }
            state.fd = -1
            state.finished = true
            return result
        }
    }

    /// Reads the finished file (at most `size` bytes, an inline-sized body) without following a link.
    /// - Throws: `CacheStoreError` from open/read, `.io` when the file is not `size` bytes long.
    func readSmallFile(size: Int64) throws(CacheStoreError) -> Data {
        let fd = try BlobFiles.openForReading(files.handles.tmp, name, path: path)
        defer { _ = cs_close(fd) }
        let count = Int(max(0, size))
        var data = Data(count: count + 1)
        let read = data.withUnsafeMutableBytes { raw -> Int64 in
            guard let base = raw.baseAddress else { return 0 }
            var offset = 0
            while offset < raw.count {
                let n = cs_read(fd, base + offset, raw.count - offset)
                if n <= 0 { return n < 0 ? -1 : Int64(offset) }
                offset += Int(n)
            }
            return Int64(offset)
        }
        if read < 0 { throw CacheStoreError.posix(cs_errno(), "read \(path)") }
        guard read == size else { throw CacheStoreError(.io, "\(path) changed while being committed") }
        return Data(data.prefix(count))
    }
}
