import Foundation
import CacheSystem
import Synchronization

/// A body being written into the store's `tmp/` directory, chunk by chunk, so that a body of any size never has
/// to sit in memory. Commit it with `CacheStore.commit(_:metadata:for:storageClass:pinned:)` or `abort()` it.
///
/// A caller may also put a finished file at `fileURL` itself (e.g. move a download there with `rename(2)`)
/// instead of calling `write(_:)`; the commit then computes size and checksum from the file, which must be a
/// regular file (a symbolic link put there is refused, never followed).
/// Thread-safe: calls are serialised by a lock.
public final class BodyWriter: Sendable {
    struct State {
        var fd: Int32
        var bytesWritten: Int64 = 0
        var crc: UInt32 = 0
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

    init(fd: Int32, name: String, files: BlobFiles, storeID: ObjectIdentifier, verified: Int64 = 0, crc: UInt32 = 0) {
        self.name = name
        self.files = files
        self.path = files.tmpPath + "/" + name
        self.fileURL = URL(fileURLWithPath: path)
        self.storeID = storeID
        self.state = Mutex(State(fd: fd, bytesWritten: verified, crc: crc))
    }

    deinit {
        state.withLock { state in
            if state.fd >= 0 { _ = cs_close(state.fd) }
            if !state.finished { files.removeTemporary(name) }
        }
    }

    /// Bytes counted in the running checksum so far: appended through `write(_:)`, taken over from a resumed
    /// partial, or read back by ``checkpoint(sync:)``.
    public var bytesWritten: Int64 { state.withLock { $0.bytesWritten } }

    /// Counts the bytes written through ``fileDescriptor`` since the last count into the running checksum: reads
    /// them back (they are in the page cache), after an fsync when `sync`. Returns the bytes counted so far and
    /// their crc32 — the prefix of the file a partial may keep.
    /// - Throws: `CacheStoreError` from fstat, fsync or read; `.invalidArgument` after commit or abort.
    @discardableResult
    public func checkpoint(sync: Bool) throws(CacheStoreError) -> (verified: Int64, crc: UInt32) {
        try state.withLock { (state: inout State) throws(CacheStoreError) -> (verified: Int64, crc: UInt32) in
            guard !state.finished, state.fd >= 0 else {
                throw CacheStoreError(.invalidArgument, "checkpoint of a body writer that was committed or aborted")
            }
            var info = cs_file_info()
            guard cs_stat_fd(state.fd, &info) == 0 else { throw CacheStoreError.posix(cs_errno(), "fstat \(path)") }
            if sync, info.size > state.bytesWritten { try BlobFiles.sync(state.fd, path: path) }
            try countTail(&state, upTo: info.size)
            return (state.bytesWritten, state.crc)
        }
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

    /// Appends `chunk` to the temporary file.
    /// - Throws: `CacheStoreError` — `.diskFull` on `ENOSPC`, `.invalidArgument` after commit or abort, `.io`.
    public func write(_ chunk: Data) throws(CacheStoreError) {
        try state.withLock { (state: inout State) throws(CacheStoreError) in
            guard !state.finished, state.fd >= 0 else {
                throw CacheStoreError(.invalidArgument, "write to a body writer that was committed or aborted")
            }
            try BlobFiles.writeAll(state.fd, chunk, path: path)
            state.bytesWritten += Int64(chunk.count)
            state.crc = BlobFiles.checksum(chunk, seed: state.crc)
        }
    }

    /// The open descriptor of the temporary file (write access; created with `O_CREAT | O_EXCL | O_NOFOLLOW`,
    /// mode 0600, relative to the store's open `tmp/` directory), for a caller that streams the body itself (a
    /// transport writing a download); -1 after commit, abort or ``detach()``. Bytes written through it are
    /// counted and checksummed by the commit, which reads the file back. Never close it yourself.
    public var fileDescriptor: Int32 { state.withLock { $0.finished ? -1 : $0.fd } }

    /// The file's first `size` bytes, read without following a link (relative to the store's open `tmp/`).
    /// - Throws: `CacheStoreError` from open/read, `.io` when the file is not `size` bytes long.
    public func contents(size: Int64) throws(CacheStoreError) -> Data {
        try readSmallFile(size: size)
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
    /// file at `path` is still the one written through `write(_:)`, else values computed by reading the file.
    /// Marks the writer finished (the caller now owns the file).
    /// - Throws: `CacheStoreError` from fsync/read, `.invalidArgument` when already finished.
    func finish(sync: Bool) throws(CacheStoreError) -> (size: Int64, crc: UInt32) {
        try state.withLock { (state: inout State) throws(CacheStoreError) -> (size: Int64, crc: UInt32) in
            guard !state.finished else {
                throw CacheStoreError(.invalidArgument, "body writer was already committed or aborted")
            }
            var written = cs_file_info()
            let fdValid = state.fd >= 0 && cs_stat_fd(state.fd, &written) == 0
            guard let current = BlobFiles.info(files.handles.tmp, name) else {
                throw CacheStoreError.posix(cs_errno(), "stat \(path)")
            }
            let sameFile = fdValid && written.inode == current.inode && written.device == current.device
                && current.size >= state.bytesWritten
            let result: (size: Int64, crc: UInt32)
            if sameFile {
                if sync { try BlobFiles.sync(state.fd, path: path) }
                // Bytes the transport wrote through the descriptor after the last checkpoint: only they are read.
                try countTail(&state, upTo: current.size)
                result = (state.bytesWritten, state.crc)
            } else {
                // A file the caller put there: opened without following a link, regular files only.
                let fd = try BlobFiles.openForReading(files.handles.tmp, name, path: path)
                defer { _ = cs_close(fd) }
                result = try BlobFiles.sizeAndChecksum(fd: fd, path: path)
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
