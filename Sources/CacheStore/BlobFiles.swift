import Foundation
#if canImport(Glibc)
import Glibc
#endif
import CZlib

/// The files of one namespace: `blobs/<id>` (immutable bodies), `tmp/` (bodies being written), plus the lock
/// and session-marker files. Thin wrappers over POSIX calls that turn `errno` into `CacheStoreError`.
struct BlobFiles: Sendable {
    /// `<directory>/<namespace>`.
    let root: URL
    let blobsPath: String
    let tmpPath: String
    let sessionsPath: String

    init(root: URL) {
        self.root = root
        blobsPath = root.appendingPathComponent("blobs", isDirectory: true).path
        tmpPath = root.appendingPathComponent("tmp", isDirectory: true).path
        sessionsPath = root.appendingPathComponent("sessions", isDirectory: true).path
    }

    var indexPath: String { root.appendingPathComponent("index.sqlite").path }
    var lockPath: String { root.appendingPathComponent("lock").path }

    func blobPath(_ id: String) -> String { blobsPath + "/" + id }

    /// A new random file name (32 lowercase hex digits) for a blob or a temporary file.
    static func newID() -> String {
        let uuid = UUID().uuid
        let bytes = [uuid.0, uuid.1, uuid.2, uuid.3, uuid.4, uuid.5, uuid.6, uuid.7,
                     uuid.8, uuid.9, uuid.10, uuid.11, uuid.12, uuid.13, uuid.14, uuid.15]
        return bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// True when `name` looks like a name `newID()` produced.
    static func isBlobName(_ name: String) -> Bool {
        name.utf8.count == 32 && name.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }

    /// True when `path` exists and is a directory (following symbolic links).
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Creates `path` with mode 0700 when it is missing, and forces 0700 when this call created it. An existing
    /// directory is left alone without calling `mkdir` (on a read-only cache `mkdir` of an existing directory
    /// fails with `EACCES`/`EROFS` rather than `EEXIST`).
    /// - Throws: `CacheStoreError` from `stat`/`mkdir` (`.permissionDenied`, `.io` for a non-directory).
    static func makeDirectory(_ path: String) throws(CacheStoreError) {
        var info = stat()
        if stat(path, &info) == 0 {
            if (info.st_mode & S_IFMT) == S_IFDIR { return }
            throw CacheStoreError.posix(ENOTDIR, "mkdir \(path)")
        }
        let statError = errno
        guard statError == ENOENT else { throw CacheStoreError.posix(statError, "stat \(path)") }
        if mkdir(path, 0o700) == 0 {
            chmod(path, 0o700)
            return
        }
        let err = errno
        if err == EEXIST, isDirectory(path) { return }  // created concurrently by another process
        throw CacheStoreError.posix(err == EEXIST ? ENOTDIR : err, "mkdir \(path)")
    }

    /// Creates the namespace directory tree (only the parts that are missing).
    /// - Throws: `CacheStoreError` from `mkdir`.
    func createDirectories() throws(CacheStoreError) {
        let parent = root.deletingLastPathComponent().path
        if !Self.isDirectory(parent) {
            do {
                try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
            } catch {
                throw CacheStoreError(.permissionDenied, "create \(parent): \(error.localizedDescription)")
            }
        }
        try Self.makeDirectory(root.path)
        try Self.makeDirectory(blobsPath)
        try Self.makeDirectory(tmpPath)
        try Self.makeDirectory(sessionsPath)
    }

    /// True when this process may create and delete files in every directory of the store (`access(W_OK)`,
    /// which also reports a read-only file system to root).
    func isWritable() -> Bool {
        let paths: [String] = [root.path, blobsPath, tmpPath, sessionsPath]
        return paths.allSatisfy { path in access(path, W_OK | X_OK) == 0 }
    }

    /// Names in a directory (no `.`/`..`), or `[]` when it cannot be read.
    static func list(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Opens a new file in `tmp/` for writing; returns its descriptor and path.
    /// - Throws: `CacheStoreError` from `open`.
    func createTemporaryFile() throws(CacheStoreError) -> (fd: Int32, path: String) {
        let path = tmpPath + "/" + Self.newID()
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CacheStoreError.posix(errno, "create \(path)") }
        return (fd, path)
    }

    /// Writes all of `data` to `fd`.
    /// - Throws: `CacheStoreError` (e.g. `.diskFull` on `ENOSPC`).
    static func writeAll(_ fd: Int32, _ data: Data, path: String) throws(CacheStoreError) {
        let failure: Int32 = data.withUnsafeBytes { raw -> Int32 in
            guard let base = raw.baseAddress else { return 0 }
            var offset = 0
            while offset < raw.count {
                let n = write(fd, base + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += n
            }
            return 0
        }
        if failure != 0 { throw CacheStoreError.posix(failure, "write \(path)") }
    }

    /// `fsync(fd)`.
    /// - Throws: `CacheStoreError` from `fsync`.
    static func sync(_ fd: Int32, path: String) throws(CacheStoreError) {
        if fsync(fd) != 0 { throw CacheStoreError.posix(errno, "fsync \(path)") }
    }

    /// Flushes a directory's entries (after a rename into it).
    func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }

    /// `rename(2)` of a temporary file to `blobs/<id>`.
    /// - Throws: `CacheStoreError` from `rename`.
    func moveIntoBlobs(from path: String, id: String) throws(CacheStoreError) {
        if rename(path, blobPath(id)) != 0 { throw CacheStoreError.posix(errno, "rename \(path) to blobs/\(id)") }
    }

    /// Deletes a file, ignoring a missing one.
    static func remove(_ path: String) {
        unlink(path)
    }

    /// Deletes whatever is at `path` — a file, a symbolic link (not its target) or a whole directory tree.
    /// - Returns: nil when it is gone (or was already missing), else why it could not be deleted.
    static func removeAnything(_ path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return errno == ENOENT ? nil : String(cString: strerror(errno)) }
        if (info.st_mode & S_IFMT) != S_IFDIR {
            return unlink(path) == 0 || errno == ENOENT ? nil : String(cString: strerror(errno))
        }
        do {
            try FileManager.default.removeItem(atPath: path)
            return nil
        } catch {
            return lstat(path, &info) != 0 ? nil : error.localizedDescription
        }
    }

    /// The size of the file at `path` in bytes, or nil when it does not exist.
    static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// What identifies one version of a file: device, inode, size, and modification and change times (ns).
    struct FileIdentity: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
        var changed: Int64

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec)
            changed = Int64(info.st_ctim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_ctim.tv_nsec)
        }
    }

    /// Reads the whole blob `id` when its size is `expectedSize`; also returns the file's identity.
    /// - Throws: `CacheStoreError`: `.notFound` when absent, `.io` on a short or long file.
    func readBlob(_ id: String, expectedSize: Int64) throws(CacheStoreError) -> (Data, FileIdentity) {
        try withOpenBlob(id, expectedSize: expectedSize) { (fd, path, identity) throws(CacheStoreError) in
            (try Self.readAll(fd: fd, path: path, count: Int(expectedSize)), identity)
        }
    }

    /// Opens blob `id` and runs `body` with its descriptor, path and identity when its size is `expectedSize`.
    /// - Throws: `CacheStoreError`: `.notFound` when absent, `.io` when the size differs; `body`'s error.
    private func withOpenBlob<T>(_ id: String, expectedSize: Int64,
                                 _ body: (Int32, String, FileIdentity) throws(CacheStoreError) -> T) throws(CacheStoreError) -> T {
        let path = blobPath(id)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CacheStoreError.posix(errno, "open \(path)") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw CacheStoreError.posix(errno, "fstat \(path)") }
        guard Int64(info.st_size) == expectedSize, expectedSize <= Int64(Int.max) else {
            throw CacheStoreError(.io, "size of \(path) is \(info.st_size), index says \(expectedSize)")
        }
        return try body(fd, path, FileIdentity(info))
    }

    /// Reads exactly `count` bytes from `fd` (named `path` in errors).
    /// - Throws: `CacheStoreError` from `read`; `EIO` when the file ends early.
    private static func readAll(fd: Int32, path: String, count: Int) throws(CacheStoreError) -> Data {
        var data = Data(count: count)
        let failure: Int32 = data.withUnsafeMutableBytes { raw -> Int32 in
            guard let base = raw.baseAddress else { return 0 }
            var offset = 0
            while offset < count {
                let n = read(fd, base + offset, count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                if n == 0 { return EIO }
                offset += n
            }
            return 0
        }
        if failure != 0 { throw CacheStoreError.posix(failure, "read \(path)") }
        return data
    }

    /// Checks blob `id` on disk: its size against `expectedSize` on every call, its crc32 (streamed) against
    /// `checksum` unless `isVerified` says this version of the file was checked already.
    /// - Returns: the identity of the file the crc32 was computed from, or nil when `isVerified` skipped it.
    /// - Throws: `CacheStoreError`: `.notFound` when absent, `.io` on a size or checksum mismatch or a read error.
    func checkBlob(_ id: String, expectedSize: Int64, checksum: UInt32,
                   isVerified: (FileIdentity) -> Bool) throws(CacheStoreError) -> FileIdentity? {
        try withOpenBlob(id, expectedSize: expectedSize) { (fd, path, identity) throws(CacheStoreError) -> FileIdentity? in
            if isVerified(identity) { return nil }
            let (size, crc) = try Self.sizeAndChecksum(fd: fd, path: path)
            guard size == expectedSize else {
                throw CacheStoreError(.io, "size mismatch: stored \(expectedSize), read \(size)")
            }
            guard crc == checksum else {
                throw CacheStoreError(.io, "checksum mismatch: stored \(checksum), computed \(crc)")
            }
            return identity
        }
    }

    /// zlib crc32 of `data`.
    static func checksum(_ data: Data, seed: UInt32 = 0) -> UInt32 {
        data.withUnsafeBytes { raw -> UInt32 in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, raw.count > 0 else { return seed }
            return UInt32(crc32_z(uLong(seed), base, z_size_t(raw.count)))
        }
    }

    /// Size in bytes and zlib crc32 of the file at `path`, read in 1 MiB chunks (never whole in memory).
    /// - Throws: `CacheStoreError` from `open`/`read`.
    static func sizeAndChecksum(ofFile path: String) throws(CacheStoreError) -> (size: Int64, crc: UInt32) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CacheStoreError.posix(errno, "open \(path)") }
        defer { close(fd) }
        return try sizeAndChecksum(fd: fd, path: path)
    }

    /// Size in bytes and zlib crc32 of what is left to read of the open file `fd` (named `path` in errors),
    /// read in 1 MiB chunks (never whole in memory).
    /// - Throws: `CacheStoreError` from `read`.
    static func sizeAndChecksum(fd: Int32, path: String) throws(CacheStoreError) -> (size: Int64, crc: UInt32) {
        let chunk = 1 << 20
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: chunk)
        defer { buffer.deallocate() }
        var crc: uLong = 0
        var total: Int64 = 0
        while true {
            let n = read(fd, buffer, chunk)
            if n < 0 {
                if errno == EINTR { continue }
                throw CacheStoreError.posix(errno, "read \(path)")
            }
            if n == 0 { break }
            crc = crc32_z(crc, buffer, z_size_t(n))
            total += Int64(n)
        }
        return (total, UInt32(crc))
    }
}
