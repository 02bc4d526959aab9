import Foundation
import CacheSystem
import CZlib
import Synchronization

/// Descriptors of a namespace's directories, opened once without following symbolic links; every file of the
/// store is then reached relative to one of them (`openat`/`unlinkat`/`renameat`), so a directory replaced by a
/// symbolic link after the store opened is never followed. Closed by `close()` (the store's `close()`) or when
/// deinitialised; afterwards every descriptor reads as -1, so a later operation fails with EBADF. An operation
/// already past that read when `close()` runs may use a descriptor number the process has reused for another
/// directory: the store only names files there by random 128-bit ids, so such a call finds nothing.
final class DirectoryHandles: Sendable {
    private let rootFD: Atomic<Int32>
    private let blobsFD: Atomic<Int32>
    private let tmpFD: Atomic<Int32>
    private let sessionsFD: Atomic<Int32>

    init(root: Int32, blobs: Int32, tmp: Int32, sessions: Int32) {
        rootFD = Atomic(root)
        blobsFD = Atomic(blobs)
        tmpFD = Atomic(tmp)
        sessionsFD = Atomic(sessions)
    }

    var root: Int32 { rootFD.load(ordering: .acquiring) }
    var blobs: Int32 { blobsFD.load(ordering: .acquiring) }
    var tmp: Int32 { tmpFD.load(ordering: .acquiring) }
    var sessions: Int32 { sessionsFD.load(ordering: .acquiring) }

    /// Closes every descriptor (once).
    func close() {
        for fd in [rootFD.exchange(-1, ordering: .acquiringAndReleasing), blobsFD.exchange(-1, ordering: .acquiringAndReleasing),
                   tmpFD.exchange(-1, ordering: .acquiringAndReleasing), sessionsFD.exchange(-1, ordering: .acquiringAndReleasing)]
        where fd >= 0 {
            _ = cs_close(fd)
        }
    }

    deinit {
        close()
    }
}

/// The files of one namespace: `blobs/<id>` (immutable bodies), `tmp/` (bodies being written), `sessions/`
/// (live-session markers), plus the index, lock and generation files. Thin wrappers over the portable system
/// layer (`CacheSystem`) that turn error numbers into `CacheStoreError`.
///
/// Nothing here follows a symbolic link: the namespace directory and its subdirectories are opened with
/// `O_NOFOLLOW` (a namespace where one is a symbolic link is refused with `.unsafeFile`), files are opened,
/// listed, renamed and deleted relative to those descriptors, opens refuse symbolic links and anything but a
/// regular file (a FIFO never blocks a read), and deleting a name never deletes what a symbolic link points to.
struct BlobFiles: Sendable {
    /// `<directory>/<namespace>`.
    let root: URL
    let blobsPath: String
    let tmpPath: String
    let sessionsPath: String
    let handles: DirectoryHandles

    /// The directory names inside a namespace.
    static let subdirectories = ["blobs", "tmp", "sessions"]
    /// The index file and SQLite's companions next to it.
    static let indexFiles = ["index.sqlite", "index.sqlite-wal", "index.sqlite-shm", "index.sqlite-journal"]

    private init(root: URL, handles: DirectoryHandles) {
        self.root = root
        self.handles = handles
        blobsPath = root.appendingPathComponent("blobs", isDirectory: true).path
        tmpPath = root.appendingPathComponent("tmp", isDirectory: true).path
        sessionsPath = root.appendingPathComponent("sessions", isDirectory: true).path
    }

    /// Files of a store that opened nothing (every operation fails or finds nothing).
    static func detached(root: URL) -> BlobFiles {
        BlobFiles(root: root, handles: DirectoryHandles(root: -1, blobs: -1, tmp: -1, sessions: -1))
    }

    var indexPath: String { root.appendingPathComponent("index.sqlite").path }
    var lockPath: String { root.appendingPathComponent("lock").path }

    func blobPath(_ id: String) -> String { blobsPath + "/" + id }

    /// What opening the namespace directories found worth a log line (a mode that was tightened).
    struct OpenNotes: Sendable {
        var warnings: [String] = []
    }

    /// Opens the namespace at `root`: creates what is missing (unless `create` is false), refuses symbolic links
    /// and non-directories, and tightens a namespace directory (or subdirectory) others may access to 0700.
    /// - Throws: `CacheStoreError` — `.unsafeFile` for a symbolic link or non-directory where a directory
    ///   belongs, `.permissionDenied` when the namespace cannot be created or read, `.notFound` when
    ///   `create` is false and it does not exist, `.io`.
    static func open(root: URL, create: Bool, notes: inout OpenNotes) throws(CacheStoreError) -> BlobFiles {
        let parent = root.deletingLastPathComponent().path
        let name = root.lastPathComponent
        if create, !isDirectory(parent) {
            do {
                try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw CacheStoreError(.permissionDenied, "create \(parent): \(error.localizedDescription)")
            }
        }
        // The cache directory itself is the caller's choice and may be reached through symbolic links; the
        // namespace inside it and everything below never are.
        let parentFD = cs_open_directory(parent)
        guard parentFD >= 0 else { throw CacheStoreError.posix(cs_errno(), "open \(parent)") }
        defer { _ = cs_close(parentFD) }
        let rootFD = try openDirectory(parentFD, name, path: root.path, create: create, notes: &notes)
        var fds: [Int32] = []
        for sub in subdirectories {
            do {
                fds.append(try openDirectory(rootFD, sub, path: root.path + "/" + sub, create: create, notes: &notes))
            } catch {
                // A read-only opener works without a missing `tmp/` or `sessions/`; a symbolic link is refused.
                guard !create, error.code == .notFound else {
                    for fd in fds + [rootFD] { _ = cs_close(fd) }
                    throw error
                }
                fds.append(-1)
            }
        }
        return BlobFiles(root: root, handles: DirectoryHandles(root: rootFD, blobs: fds[0], tmp: fds[1], sessions: fds[2]))
    }

    /// Opens (creating with 0700 when missing and `create`) the directory `name` in `parentFD`.
    private static func openDirectory(_ parentFD: Int32, _ name: String, path: String, create: Bool,
                                      notes: inout OpenNotes) throws(CacheStoreError) -> Int32 {
        var fd = cs_open_directory_at(parentFD, name)
        if fd < 0, cs_classify_error(cs_errno()) == CS_ERROR_NOT_FOUND, create {
            if cs_make_directory_at(parentFD, name, 0o700) != 0,
               cs_classify_error(cs_errno()) != CS_ERROR_EXISTS {
                throw CacheStoreError.posix(cs_errno(), "mkdir \(path)")
            }
            fd = cs_open_directory_at(parentFD, name)
        }
        guard fd >= 0 else {
            let err = cs_errno()
            switch cs_classify_error(err) {
            case CS_ERROR_SYMLINK:
                throw CacheStoreError(.unsafeFile, "\(path) is a symbolic link; the store never follows one "
                    + "inside its directory and will not use this namespace")
            case CS_ERROR_NOT_DIRECTORY:
                throw CacheStoreError(.unsafeFile, "\(path) is not a directory; the store will not use this namespace")
            case CS_ERROR_PERMISSION:
                var info = cs_file_info()
                let owner = cs_stat_path(path, 0, &info) == 0
                    ? " (owner uid \(info.owner), mode \(String(info.permissions, radix: 8)); this process is uid \(cs_user_id()))"
                    : ""
                throw CacheStoreError.posix(err, "cannot read the cache at \(path)\(owner)")
            default:
                throw CacheStoreError.posix(err, "open \(path)")
            }
        }
        var info = cs_file_info()
        if cs_stat_fd(fd, &info) == 0, info.permissions & 0o077 != 0, info.owner == cs_user_id() {
            if cs_set_permissions(fd, 0o700) == 0 {
                notes.warnings.append("\(path) had mode \(String(info.permissions, radix: 8)), which lets other "
                    + "users read the cache; tightened to 700")
            }
        }
        return fd
    }

    /// A new random file name (32 lowercase hex digits) for a blob or a temporary file.
    static func newID() -> String {
        let uuid = UUID().uuid
        let bytes = [uuid.0, uuid.1, uuid.2, uuid.3, uuid.4, uuid.5, uuid.6, uuid.7,
                     uuid.8, uuid.9, uuid.10, uuid.11, uuid.12, uuid.13, uuid.14, uuid.15]
        // Hex digits written directly: `String(format:)` per byte cost more than the rest of a small write.
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var hex = [UInt8]()
        hex.reserveCapacity(32)
        for byte in bytes {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// True when `name` looks like a name `newID()` produced.
    static func isBlobName(_ name: String) -> Bool {
        name.utf8.count == 32 && name.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }

    /// True when `path` exists and is a directory (following symbolic links: for the caller's cache directory).
    static func isDirectory(_ path: String) -> Bool {
        var info = cs_file_info()
        return cs_stat_path(path, 1, &info) == 0 && info.isDirectory
    }

    /// True when this process may create and delete files in every directory of the store (`access(W_OK)`,
    /// which also reports a read-only file system to root).
    func isWritable() -> Bool {
        let paths: [String] = [root.path, blobsPath, tmpPath, sessionsPath]
        return paths.allSatisfy { path in cs_access(path, 1) == 0 }
    }

    /// The size of `index.sqlite` (a regular file, not followed), or nil when it is missing.
    func indexFileSize() -> Int64? {
        guard let info = Self.info(handles.root, "index.sqlite"), info.isRegular else { return nil }
        return info.size
    }

    /// Makes the store's own files owner-only: creates `index.sqlite` with 0600 before SQLite opens it (SQLite
    /// gives its `-wal` and `-shm` files the database file's mode), and tightens an existing index, WAL, shared
    /// memory, lock or generation file others may read to 0600, noting each in `notes`.
    func makeFilesOwnerOnly(notes: inout OpenNotes) {
        let created = cs_open_file_at(handles.root, "index.sqlite", CS_OPEN_READ_WRITE, CS_OPEN_CREATE, 0o600)
        if created >= 0 { _ = cs_close(created) }
        for name in Self.indexFiles + ["lock", "generation"] {
            // A hard link's other names are not the store's: never change the mode of a file linked elsewhere.
            guard let info = Self.info(handles.root, name), info.isRegular, info.links == 1,
                  info.permissions & 0o077 != 0, info.owner == cs_user_id() else { continue }
            let fd = cs_open_file_at(handles.root, name, CS_OPEN_READ, CS_OPEN_EXISTING, 0)
            guard fd >= 0 else { continue }
            if cs_set_permissions(fd, 0o600) == 0 {
                notes.warnings.append("\(root.path)/\(name) had mode \(String(info.permissions, radix: 8)); tightened to 600")
            }
            _ = cs_close(fd)
        }
    }

    /// Checks that the namespace path still names the directory the store opened (SQLite opens the index by
    /// path: a namespace directory renamed and replaced, or replaced by a symbolic link, after the store opened
    /// it would otherwise give the store an index outside its directory).
    /// - Throws: `.unsafeFile` when the path now names something else.
    func checkRootUnmoved() throws(CacheStoreError) {
        var opened = cs_file_info()
        var named = cs_file_info()
        guard cs_stat_fd(handles.root, &opened) == 0, cs_stat_path(root.path, 0, &named) == 0,
              named.isDirectory, named.device == opened.device, named.inode == opened.inode else {
            throw CacheStoreError(.unsafeFile, "\(root.path) was replaced while the store opened it; "
                + "the store will not use this namespace")
        }
    }

    /// Refuses a namespace whose index files are symbolic links or not regular files (SQLite opens them by path).
    /// - Throws: `.unsafeFile` naming the file.
    func checkIndexFiles() throws(CacheStoreError) {
        for name in Self.indexFiles {
            var info = cs_file_info()
            guard cs_stat_at(handles.root, name, &info) == 0 else { continue }
            if !info.isRegular || info.links != 1 {
                let what = info.isSymbolicLink ? "a symbolic link"
                    : info.isRegular ? "a hard link to another file (\(info.links) names)" : "not a regular file"
                throw CacheStoreError(.unsafeFile, "\(root.path)/\(name) is \(what); the store will not use this namespace")
            }
        }
    }

    /// Names in the directory `fd` (no `.`/`..`), or `[]` when it cannot be read.
    static func list(_ fd: Int32) -> [String] {
        guard fd >= 0, let listing = cs_listing_open_at(fd, ".") else { return [] }
        defer { cs_listing_close(listing) }
        var names: [String] = []
        while let name = cs_listing_next(listing) { names.append(String(cString: name)) }
        return names
    }

    /// Names in the directory at `path` (not following a final symbolic link), or `[]` when it cannot be read.
    static func list(_ path: String) -> [String] {
        let fd = cs_open_directory_at(cs_current_directory(), path)
        guard fd >= 0 else { return [] }
        defer { _ = cs_close(fd) }
        return list(fd)
    }

    /// Opens a new file in `tmp/` for writing; returns its descriptor and name.
    /// - Throws: `CacheStoreError` from `open`.
    func createTemporaryFile() throws(CacheStoreError) -> (fd: Int32, name: String) {
        let name = Self.newID()
        let fd = cs_open_file_at(handles.tmp, name, CS_OPEN_WRITE, CS_OPEN_CREATE_NEW, 0o600)
        guard fd >= 0 else { throw CacheStoreError.posix(cs_errno(), "create \(tmpPath)/\(name)") }
        return (fd, name)
    }

    /// Writes all of `data` to `fd`.
    /// - Throws: `CacheStoreError` (e.g. `.diskFull` on `ENOSPC`).
    static func writeAll(_ fd: Int32, _ data: Data, path: String) throws(CacheStoreError) {
        let failed = data.withUnsafeBytes { raw -> Bool in
            guard let base = raw.baseAddress, raw.count > 0 else { return false }
            return cs_write_all(fd, base, raw.count) != 0
        }
        if failed { throw CacheStoreError.posix(cs_errno(), "write \(path)") }
    }

    /// Makes `fd`'s data durable (`fsync`; `F_FULLFSYNC` on Apple platforms).
    /// - Throws: `CacheStoreError` from the sync.
    static func sync(_ fd: Int32, path: String) throws(CacheStoreError) {
        if cs_sync(fd) != 0 { throw CacheStoreError.posix(cs_errno(), "fsync \(path)") }
    }

    /// Flushes `blobs/`'s entries (after a rename into it).
    func syncBlobsDirectory() {
        _ = cs_sync(handles.blobs)
    }

    /// `renameat(2)` of `tmp/<name>` to `blobs/<id>`.
    /// - Throws: `CacheStoreError` from `rename`.
    func moveIntoBlobs(temporary name: String, id: String) throws(CacheStoreError) {
        if cs_rename_at(handles.tmp, name, handles.blobs, id) != 0 {
            throw CacheStoreError.posix(cs_errno(), "rename tmp/\(name) to blobs/\(id)")
        }
    }

    /// Deletes `blobs/<id>` (a symbolic link there is deleted, never its target; a directory is left).
    func removeBlob(_ id: String) {
        _ = cs_unlink_at(handles.blobs, id)
    }

    /// Deletes `tmp/<name>`.
    func removeTemporary(_ name: String) {
        _ = cs_unlink_at(handles.tmp, name)
    }

    /// Deletes `sessions/<name>`.
    func removeSession(_ name: String) {
        _ = cs_unlink_at(handles.sessions, name)
    }

    /// Deletes the file at `path` (never a directory; a symbolic link itself, not its target).
    static func remove(_ path: String) {
        _ = cs_unlink(path)
    }

    /// Deletes whatever is called `name` in the directory `fd` — a file, a symbolic link (not its target) or a
    /// whole directory tree, descending only through directories opened without following symbolic links.
    /// - Returns: nil when it is gone (or was already missing), else why it could not be deleted.
    static func removeAnything(_ fd: Int32, _ name: String, depth: Int = 0) -> String? {
        var info = cs_file_info()
        guard cs_stat_at(fd, name, &info) == 0 else {
            let err = cs_errno()
            return cs_classify_error(err) == CS_ERROR_NOT_FOUND ? nil : message(err)
        }
        if !info.isDirectory {
            if cs_unlink_at(fd, name) == 0 { return nil }
            let err = cs_errno()
            return cs_classify_error(err) == CS_ERROR_NOT_FOUND ? nil : message(err)
        }
        guard depth < 64 else { return "directory tree too deep" }
        let child = cs_open_directory_at(fd, name)
        guard child >= 0 else { return message(cs_errno()) }
        var failure: String?
        for entry in list(child) {
            if let problem = removeAnything(child, entry, depth: depth + 1) { failure = failure ?? problem }
        }
        _ = cs_close(child)
        if cs_remove_directory_at(fd, name) == 0 { return nil }
        let err = cs_errno()
        return cs_classify_error(err) == CS_ERROR_NOT_FOUND ? nil : (failure ?? message(err))
    }

    /// The system's message for error number `err`.
    static func message(_ err: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        cs_error_message(err, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Information about `name` in the directory `fd` (not following a symbolic link), or nil when absent.
    static func info(_ fd: Int32, _ name: String) -> cs_file_info? {
        var info = cs_file_info()
        return cs_stat_at(fd, name, &info) == 0 ? info : nil
    }

    /// The size of the regular file at `path` in bytes, or nil when it does not exist or is not a regular file
    /// (a symbolic link is not followed).
    static func fileSize(_ path: String) -> Int64? {
        var info = cs_file_info()
        guard cs_stat_path(path, 0, &info) == 0, info.isRegular else { return nil }
        return info.size
    }

    /// The size of the regular file `blobs/<id>`, or nil when it is missing or not a regular file.
    func blobSize(_ id: String) -> Int64? {
        guard let info = Self.info(handles.blobs, id), info.isRegular else { return nil }
        return info.size
    }

    /// What identifies one version of a file: device, inode, size, and modification and change times (ns).
    struct FileIdentity: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
        var changed: Int64

        init(_ info: cs_file_info) {
            device = info.device
            inode = info.inode
            size = info.size
            modified = info.modified_ns
            changed = info.changed_ns
        }
    }

    /// Reads the whole blob `id` when its size is `expectedSize`; also returns the file's identity.
    /// - Throws: `CacheStoreError`: `.notFound` when absent, `.io` on a short or long file, `.unsafeFile` for a
    ///   symbolic link or non-regular file.
    func readBlob(_ id: String, expectedSize: Int64) throws(CacheStoreError) -> (Data, FileIdentity) {
        try withOpenBlob(id, expectedSize: expectedSize) { (fd, path, identity) throws(CacheStoreError) in
            (try Self.readAll(fd: fd, path: path, count: Int(expectedSize)), identity)
        }
    }

    /// Opens `name` in the directory `fd` for reading (no symbolic link, regular files only).
    /// - Throws: `CacheStoreError` naming `path`.
    static func openForReading(_ fd: Int32, _ name: String, path: String) throws(CacheStoreError) -> Int32 {
        let file = cs_open_file_at(fd, name, CS_OPEN_READ, CS_OPEN_EXISTING, 0)
        guard file >= 0 else { throw CacheStoreError.posix(cs_errno(), "open \(path)") }
        return file
    }

    /// Opens blob `id` for reading and checks its size is `expectedSize`; the caller closes the descriptor.
    /// - Throws: `CacheStoreError`: `.notFound` when absent, `.io` when the size differs, `.unsafeFile`.
    func openBlob(_ id: String, expectedSize: Int64) throws(CacheStoreError) -> (fd: Int32, identity: FileIdentity) {
        let path = blobPath(id)
        let fd = try Self.openForReading(handles.blobs, id, path: path)
        var info = cs_file_info()
        guard cs_stat_fd(fd, &info) == 0 else {
            let error = CacheStoreError.posix(cs_errno(), "fstat \(path)")
            _ = cs_close(fd)
            throw error
        }
        guard info.size == expectedSize, expectedSize >= 0, expectedSize <= Int64(Int.max) else {
            _ = cs_close(fd)
            throw CacheStoreError(.io, "size of \(path) is \(info.size), index says \(expectedSize)")
        }
        return (fd, FileIdentity(info))
    }

    /// Opens blob `id` and runs `body` with its descriptor, path and identity when its size is `expectedSize`.
    /// - Throws: `CacheStoreError`: `.notFound` when absent, `.io` when the size differs; `body`'s error.
    private func withOpenBlob<T>(_ id: String, expectedSize: Int64,
                                 _ body: (Int32, String, FileIdentity) throws(CacheStoreError) -> T) throws(CacheStoreError) -> T {
        let (fd, identity) = try openBlob(id, expectedSize: expectedSize)
        defer { _ = cs_close(fd) }
        return try body(fd, blobPath(id), identity)
    }

    /// Reads exactly `count` bytes from `fd` (named `path` in errors).
    /// - Throws: `CacheStoreError` from `read`; `.io` when the file ends early.
    private static func readAll(fd: Int32, path: String, count: Int) throws(CacheStoreError) -> Data {
        var data = Data(count: count)
        let failure: Int32 = data.withUnsafeMutableBytes { raw -> Int32 in
            guard let base = raw.baseAddress else { return 0 }
            var offset = 0
            while offset < count {
                let n = cs_read(fd, base + offset, count - offset)
                if n < 0 { return cs_errno() }
                if n == 0 { return -1 }
                offset += Int(n)
            }
            return 0
        }
        if failure == -1 { throw CacheStoreError(.io, "read \(path): the file ended early") }
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
            try Self.check(fd: fd, path: path, identity: identity, expectedSize: expectedSize, checksum: checksum,
                           isVerified: isVerified)
        }
    }

    /// The checks of `checkBlob` on an open descriptor (left positioned anywhere).
    static func check(fd: Int32, path: String, identity: FileIdentity, expectedSize: Int64, checksum: UInt32,
                      isVerified: (FileIdentity) -> Bool) throws(CacheStoreError) -> FileIdentity? {
        if isVerified(identity) { return nil }
        let (size, crc) = try sizeAndChecksum(fd: fd, path: path)
        guard size == expectedSize else {
            throw CacheStoreError(.io, "size mismatch: stored \(expectedSize), read \(size)")
        }
        guard crc == checksum else {
            throw CacheStoreError(.io, "checksum mismatch: stored \(checksum), computed \(crc)")
        }
        return identity
    }

    /// zlib crc32 of `data`.
    static func checksum(_ data: Data, seed: UInt32 = 0) -> UInt32 {
        data.withUnsafeBytes { raw -> UInt32 in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, raw.count > 0 else { return seed }
            return UInt32(crc32_z(uLong(seed), base, z_size_t(raw.count)))
        }
    }

    /// Size in bytes and zlib crc32 of the regular file `name` in the directory `fd`, read in 1 MiB chunks.
    /// - Throws: `CacheStoreError` from `open`/`read` (`.unsafeFile` for a symbolic link or non-regular file).
    static func sizeAndChecksum(_ fd: Int32, _ name: String, path: String) throws(CacheStoreError) -> (size: Int64, crc: UInt32) {
        let file = try openForReading(fd, name, path: path)
        defer { _ = cs_close(file) }
        return try sizeAndChecksum(fd: file, path: path)
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
            let n = cs_read(fd, buffer, chunk)
            if n < 0 { throw CacheStoreError.posix(cs_errno(), "read \(path)") }
            if n == 0 { break }
            crc = crc32_z(crc, buffer, z_size_t(n))
            total += n
        }
        return (total, UInt32(crc))
    }
}

extension cs_file_info {
    var isRegular: Bool { kind == CS_KIND_REGULAR.rawValue }
    var isDirectory: Bool { kind == CS_KIND_DIRECTORY.rawValue }
    var isSymbolicLink: Bool { kind == CS_KIND_SYMLINK.rawValue }
}
