import Foundation
import CacheSystem
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
/// (live-session markers), plus the index, lock and generation files. This file holds the layout (names, paths,
/// opening the directories, the modes of the store's own files); the file-system calls on those files are in
/// `BlobFiles+FileSystem.swift`, checksums and file identity in `BlobFiles+Checksums.swift`, all through the
/// portable system layer (`CacheSystem`) with error numbers turned into `CacheStoreError`.
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
    /// With `create`, a namespace directory another user owns is refused before anything is created in it.
    /// - Throws: `CacheStoreError` — `.unsafeFile` for a symbolic link or non-directory where a directory
    ///   belongs or (with `create`) for another user's namespace directory, `.permissionDenied` when the
    ///   namespace cannot be created or read, `.notFound` when
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
        // Another user's namespace directory is refused before anything is created in it.
        if create, let foreign = foreignOwner(ofDirectory: rootFD, path: root.path) {
            _ = cs_close(rootFD)
            throw foreignOwnerError(foreign)
        }
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

    /// A new random file name (32 lowercase hex digits: 128 bits from the system's generator) for a blob or a
    /// temporary file.
    static func newID() -> String {
        // The system generator (`getrandom` on Linux, `arc4random` on Apple platforms); Foundation's `UUID()`
        // opens, reads and closes `/dev/urandom` on every call on Linux.
        var generator = SystemRandomNumberGenerator()
        let words = (generator.next() as UInt64, generator.next() as UInt64)
        // Hex digits written directly: `String(format:)` per byte cost more than the rest of a small write.
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var hex = [UInt8]()
        hex.reserveCapacity(32)
        for word in [words.0, words.1] {
            for shift in stride(from: 60, through: 0, by: -4) {
                hex.append(digits[Int((word >> UInt64(shift)) & 0x0F)])
            }
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// True when `name` looks like a name `newID()` produced.
    static func isBlobName(_ name: String) -> Bool {
        name.utf8.count == 32 && name.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }

    /// True when this process may create and delete files in every directory of the store (`access(W_OK)`,
    /// which also reports a read-only file system to root), asked of the directories the store opened.
    func isWritable() -> Bool {
        [handles.root, handles.blobs, handles.tmp, handles.sessions].allSatisfy { fd in
            fd >= 0 && cs_access_directory(fd, 1) == 0
        }
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
            guard let info = Self.info(handles.root, name), info.reasonItIsNotTheStores == nil,
                  info.permissions & 0o077 != 0 else { continue }
            let fd = cs_open_file_at(handles.root, name, CS_OPEN_READ, CS_OPEN_EXISTING, 0)
            guard fd >= 0 else { continue }
            if cs_set_permissions(fd, 0o600) == 0 {
                notes.warnings.append("\(root.path)/\(name) had mode \(String(info.permissions, radix: 8)); tightened to 600")
            }
            _ = cs_close(fd)
        }
    }

    /// Why the namespace belongs to another user, or `nil`: the namespace directory or one of its index files
    /// is owned by a uid other than this process's and root's (e.g. planted by another user in a shared cache
    /// directory). Its owner could have stored any response there for this user to be served, and could read
    /// whatever this store would write, so the store neither serves nor writes it (``refuseForeignOwner()``).
    func foreignOwner() -> String? {
        let me = cs_user_id()
        if let foreign = Self.foreignOwner(ofDirectory: handles.root, path: root.path) { return foreign }
        for name in Self.indexFiles {
            guard let file = Self.info(handles.root, name), file.owner != me, file.owner != 0 else { continue }
            return "\(root.path)/\(name) is owned by uid \(file.owner), not by this user (uid \(me))"
        }
        return nil
    }

    /// Why the directory `fd` (named `path` in messages) belongs to another user (not this process's uid, not
    /// root), or `nil`.
    static func foreignOwner(ofDirectory fd: Int32, path: String) -> String? {
        let me = cs_user_id()
        var info = cs_file_info()
        guard cs_stat_fd(fd, &info) == 0, info.owner != me, info.owner != 0 else { return nil }
        return "\(path) is owned by uid \(info.owner), not by this user (uid \(me))"
    }

    /// The error refusing a namespace for `foreign` (a ``foreignOwner()`` answer).
    static func foreignOwnerError(_ foreign: String) -> CacheStoreError {
        CacheStoreError(.unsafeFile, "\(foreign): refused, its owner could have planted the responses it holds")
    }

    /// Refuses a namespace another user owns (``foreignOwner()``).
    /// - Throws: `.unsafeFile` naming the owner.
    func refuseForeignOwner() throws(CacheStoreError) {
        guard let foreign = foreignOwner() else { return }
        throw Self.foreignOwnerError(foreign)
    }

    /// Checks that the namespace path still names the directory the store opened. SQLite reaches the index
    /// through the directory's descriptor, so a namespace renamed and replaced meanwhile never gives the store
    /// another index; a namespace someone moves while it is being opened is refused all the same.
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

    /// Refuses a namespace whose index files are symbolic links, hard links or not regular files.
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
}
