import Foundation
import CacheSystem

/// The file-system calls on a namespace's files: listing, creating, writing, syncing, renaming, deleting and
/// reading, each relative to a directory descriptor of ``DirectoryHandles`` and through the portable system layer
/// (`CacheSystem`), with error numbers turned into `CacheStoreError`. None follows a symbolic link.
extension BlobFiles {
    /// True when `path` exists and is a directory (following symbolic links: for the caller's cache directory).
    static func isDirectory(_ path: String) -> Bool {
        var info = cs_file_info()
        return cs_stat_path(path, 1, &info) == 0 && info.isDirectory
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

    /// Creates the new file `blobs/<id>` holding `data` (no link followed, 0600) and returns its descriptor, open
    /// for writing. The file is named by no row until the caller commits one.
    ///
    /// Where the file system has unnamed files (`O_TMPFILE` on Linux), the body is written to one and then
    /// linked in as `blobs/<id>`: only the short link takes the directory's lock, so writers on several threads
    /// create their files in parallel (an `O_CREAT` holds that lock while the file system allocates the inode),
    /// and a process killed mid-write leaves no file. Elsewhere `O_CREAT | O_EXCL` and a write.
    /// - Throws: `CacheStoreError` from `open`, `write` (e.g. `.diskFull`) or `linkat`; nothing is left behind.
    func createBlob(_ id: String, holding data: Data) throws(CacheStoreError) -> Int32 {
        let unnamed = cs_create_unnamed_at(handles.blobs, 0o600)
        if unnamed >= 0 {
            do {
                try Self.writeAll(unnamed, data, path: blobPath(id))
            } catch {
                _ = cs_close(unnamed)
                throw error
            }
            if cs_link_unnamed_at(unnamed, handles.blobs, id) == 0 { return unnamed }
            // No way to name it here (no /proc, no privilege): the named route below reports any real error.
            _ = cs_close(unnamed)
        }
        let fd = cs_open_file_at(handles.blobs, id, CS_OPEN_WRITE, CS_OPEN_CREATE_NEW, 0o600)
        guard fd >= 0 else { throw CacheStoreError.posix(cs_errno(), "create \(blobPath(id))") }
        do {
            try Self.writeAll(fd, data, path: blobPath(id))
        } catch {
            _ = cs_close(fd)
            removeBlob(id)
            throw error
        }
        return fd
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

    /// Deletes `blobs/<id>` (a symbolic link there is deleted, never its target; a directory is left). An id
    /// that is not a name ``newID()`` makes (an edited index row: `../x`) deletes nothing.
    func removeBlob(_ id: String) {
        guard Self.isBlobName(id) else { return }
        _ = cs_unlink_at(handles.blobs, id)
    }

    /// Deletes `tmp/<name>`; a name that is not one ``newID()`` makes (an edited partial row: `../x`) deletes
    /// nothing outside `tmp/`.
    func removeTemporary(_ name: String) {
        guard Self.isBlobName(name) else { return }
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

    /// Reads the whole blob `id` when its size is `expectedSize`; also returns the file's identity.
    /// - Throws: `CacheStoreError`: `.notFound` when absent, `.io` on a short or long file, `.unsafeFile` for a
    ///   symbolic link or non-regular file.
    func readBlob(_ id: String, expectedSize: Int64) throws(CacheStoreError) -> (Data, FileIdentity) {
        let (fd, identity) = try openBlob(id, expectedSize: expectedSize)
        defer { _ = cs_close(fd) }
        return (try Self.readAll(fd: fd, directory: blobsPath, name: id, count: Int(expectedSize)), identity)
    }

    /// Opens `name` in the directory `fd` for reading (no symbolic link, regular files only).
    /// - Throws: `CacheStoreError` naming `path`.
    static func openForReading(_ fd: Int32, _ name: String, path: String) throws(CacheStoreError) -> Int32 {
        let file = cs_open_file_at(fd, name, CS_OPEN_READ, CS_OPEN_EXISTING, 0)
        guard file >= 0 else { throw CacheStoreError.posix(cs_errno(), "open \(path)") }
        return file
    }

    /// Opens the partial body `tmp/<name>` for reading and writing (no link followed) and returns its descriptor
    /// with the `fstat` of that descriptor, or why it must not be written: the store cuts and appends to a partial,
    /// so the file must be a regular file of this user with no other name. A hard link planted at the name is not
    /// seen by `O_NOFOLLOW`; writing through it would cut and extend another file of the user, outside the cache.
    /// A refused file is closed and left as it is; the caller removes the name (which leaves any other name of
    /// the file untouched).
    /// `forWriting` false opens it only for reading, with the same checks (`verify` reads a partial, never writes it).
    /// - Returns: `.failure` with `.unsafeFile` (not a store name, a symbolic link, other names, another owner,
    ///   not regular), `.notFound`, `.permissionDenied` or `.io` from the open or `fstat`.
    func openPartial(_ name: String, forWriting: Bool = true) -> Result<(fd: Int32, info: cs_file_info), CacheStoreError> {
        let path = tmpPath + "/" + name
        guard Self.isBlobName(name) else {
            return .failure(CacheStoreError(.unsafeFile, "partial \(path) is not a name of the store's tmp/"))
        }
        let fd = cs_open_file_at(handles.tmp, name, forWriting ? CS_OPEN_READ_WRITE : CS_OPEN_READ, CS_OPEN_EXISTING, 0)
        guard fd >= 0 else { return .failure(CacheStoreError.posix(cs_errno(), "open \(path)")) }
        var info = cs_file_info()
        if cs_stat_fd(fd, &info) != 0 {
            let error = CacheStoreError.posix(cs_errno(), "fstat \(path)")
            _ = cs_close(fd)
            return .failure(error)
        }
        if let refusal = info.reasonItIsNotTheStores {
            _ = cs_close(fd)
            return .failure(CacheStoreError(.unsafeFile, "partial \(path) \(refusal); never written"))
        }
        return .success((fd, info))
    }

    /// Opens blob `id` for reading and checks its size is `expectedSize`; the caller closes the descriptor.
    /// - Throws: `CacheStoreError`: `.notFound` when absent, `.io` when the size differs, `.unsafeFile`.
    func openBlob(_ id: String, expectedSize: Int64) throws(CacheStoreError) -> (fd: Int32, identity: FileIdentity) {
        var info = cs_file_info()
        let fd = cs_open_existing_for_reading_at(handles.blobs, id, &info)
        guard fd >= 0 else { throw CacheStoreError.posix(cs_errno(), "open \(blobPath(id))") }
        guard info.size == expectedSize, expectedSize >= 0, expectedSize <= Int64(Int.max) else {
            _ = cs_close(fd)
            throw CacheStoreError(.io, "size of \(blobPath(id)) is \(info.size), index says \(expectedSize)")
        }
        return (fd, FileIdentity(info))
    }

    /// Opens blob `id` and runs `body` with its descriptor, path and identity when its size is `expectedSize`.
    /// - Throws: `CacheStoreError`: `.notFound` when absent, `.io` when the size differs; `body`'s error.
    func withOpenBlob<T>(_ id: String, expectedSize: Int64,
                                 _ body: (Int32, String, FileIdentity) throws(CacheStoreError) -> T) throws(CacheStoreError) -> T {
        let (fd, identity) = try openBlob(id, expectedSize: expectedSize)
        defer { _ = cs_close(fd) }
        return try body(fd, blobPath(id), identity)
    }

    /// Reads exactly `count` bytes from `fd`; `directory` + `/` + `name` names it in errors (composed only for one:
    /// the hit path passes both strings without copying anything).
    /// - Throws: `CacheStoreError` from `read`; `.io` when the file ends early.
    /// The bytes are read into an uninitialised buffer that becomes the `Data` (no zero-filling first: at 16 KB
    /// that costs about as much as the copy out of the page cache).
    private static func readAll(fd: Int32, directory: String, name: String, count: Int) throws(CacheStoreError) -> Data {
        guard count > 0 else { return Data() }
        let base = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
        var offset = 0
        var failure: Int32 = 0
        while offset < count {
            let n = cs_read(fd, base + offset, count - offset)
            if n < 0 { failure = cs_errno(); break }
            if n == 0 { failure = -1; break }
            offset += Int(n)
        }
        guard failure == 0 else {
            base.deallocate()
            if failure == -1 { throw CacheStoreError(.io, "read \(directory)/\(name): the file ended early") }
            throw CacheStoreError.posix(failure, "read \(directory)/\(name)")
        }
        return Data(bytesNoCopy: base, count: count, deallocator: .custom { pointer, _ in pointer.deallocate() })
    }
}

extension cs_file_info {
    var isRegular: Bool { kind == CS_KIND_REGULAR.rawValue }
    var isDirectory: Bool { kind == CS_KIND_DIRECTORY.rawValue }
    var isSymbolicLink: Bool { kind == CS_KIND_SYMLINK.rawValue }

    /// Why the store may not write to or change this file, or `nil` when it may: it must be a regular file with
    /// no other name (a hard link's other names are not the store's: writing through one changes a file outside
    /// the cache), owned by this process's user. The answer completes "<path> …" ("is not a regular file").
    var reasonItIsNotTheStores: String? {
        if !isRegular { return "is not a regular file" }
        if links != 1 { return "is a hard link to another file (\(links) names)" }
        if owner != cs_user_id() { return "is owned by uid \(owner), not by this user (uid \(cs_user_id()))" }
        return nil
    }
}
