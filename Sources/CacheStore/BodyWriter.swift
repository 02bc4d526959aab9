import Foundation
#if canImport(Glibc)
import Glibc
#endif
import CZlib
import Synchronization

/// A body being written into the store's `tmp/` directory, chunk by chunk, so that a body of any size never has
/// to sit in memory. Commit it with `CacheStore.commit(_:metadata:for:storageClass:pinned:)` or `abort()` it.
///
/// A caller may also put a finished file at `fileURL` itself (e.g. move a download there with `rename(2)`)
/// instead of calling `write(_:)`; the commit then computes size and checksum from the file.
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
    /// Identifies the store that made this writer.
    let storeID: ObjectIdentifier
    let state: Mutex<State>

    init(fd: Int32, path: String, storeID: ObjectIdentifier) {
        self.path = path
        self.fileURL = URL(fileURLWithPath: path)
        self.storeID = storeID
        self.state = Mutex(State(fd: fd))
    }

    deinit {
        state.withLock { state in
            if state.fd >= 0 { close(state.fd) }
            if !state.finished { unlink(path) }
        }
    }

    /// Bytes appended through `write(_:)` so far.
    public var bytesWritten: Int64 { state.withLock { $0.bytesWritten } }

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

    /// Deletes the temporary file; the writer cannot be used afterwards. Calling it twice is harmless.
    public func abort() {
        state.withLock { state in
            if state.fd >= 0 { close(state.fd) }
            state.fd = -1
            if !state.finished { unlink(path) }
            state.finished = true
        }
    }

    /// Closes the file after an fsync and returns its size and crc32 — the running values when the file at
    /// `path` is still the one written through `write(_:)`, else values computed by reading the file.
    /// Marks the writer finished (the caller now owns the file).
    /// - Throws: `CacheStoreError` from fsync/read, `.invalidArgument` when already finished.
    func finish() throws(CacheStoreError) -> (size: Int64, crc: UInt32) {
        try state.withLock { (state: inout State) throws(CacheStoreError) -> (size: Int64, crc: UInt32) in
            guard !state.finished else {
                throw CacheStoreError(.invalidArgument, "body writer was already committed or aborted")
            }
            var written = stat()
            var current = stat()
            let fdValid = state.fd >= 0 && fstat(state.fd, &written) == 0
            guard stat(path, &current) == 0 else { throw CacheStoreError.posix(errno, "stat \(path)") }
            let sameFile = fdValid && written.st_ino == current.st_ino && written.st_dev == current.st_dev
                && Int64(current.st_size) == state.bytesWritten
            let result: (size: Int64, crc: UInt32)
            if sameFile {
                try BlobFiles.sync(state.fd, path: path)
                result = (state.bytesWritten, state.crc)
            } else {
                result = try BlobFiles.sizeAndChecksum(ofFile: path)
                let fd = open(path, O_RDONLY | O_CLOEXEC)
                if fd >= 0 {
                    fsync(fd)
                    close(fd)
                }
            }
            if state.fd >= 0 { close(state.fd) }
            state.fd = -1
            state.finished = true
            return result
        }
    }
}
