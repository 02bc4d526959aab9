import Foundation
import CacheSystem

/// Opening, crash recovery and namespaces.
///
/// Locking protocol for several processes on one namespace directory:
/// - Every open store holds a shared `flock` on `<namespace>/lock` for its whole life.
/// - Opening first tries an exclusive, non-blocking `flock`. Only a process that gets it — so no other process
///   has the namespace open and no write can be in flight — runs the destructive recovery: empty `tmp/` (but
///   for the files of partial entries, each cut to its verified prefix), delete pending and session rows and rows unused for longer than `maxAge`, and after an unclean shutdown (a marker
///   left in `sessions/`) or a rebuilt index, delete rows whose blob is missing and blobs no row names, then
///   recompute the totals. It then downgrades to
///   the shared lock. A process that does not get the exclusive lock waits for a shared one and skips recovery, so
///   it can never delete a blob another live process is about to commit.
/// - Each writable store creates a marker `sessions/<pid>-<id>` before its first write (a body file, a row, a
///   partial entry; access times and hit/miss counters are not such writes) and deletes it when it is closed
///   (`close()`, `deinit`, or the `exit()` handler); a marker found by an exclusive opener therefore belongs to a
///   process that died after writing. A store that only read leaves nothing to recover: its one possible write,
///   the access times and counters at close, is a single SQLite transaction.
/// - Closing unlocks the lock explicitly (`LOCK_UN`) before closing the descriptor. A `flock` belongs to the open
///   file description, which a child process spawned meanwhile shares until its `exec` closes it (`O_CLOEXEC`);
///   a bare `close` would leave the lock held through that copy, and the next opener — seeing a live process —
///   would skip recovery (session entries would survive a reopen).
/// - Nothing inside the namespace is reached through a symbolic link: the namespace directory and `blobs/`, `tmp/`,
///   `sessions/` are opened once with `O_NOFOLLOW` and every file is opened, renamed and deleted relative to them
///   (see `BlobFiles`). SQLite too reaches the index, its `-wal`, `-shm` and `-journal` files and the directory
///   it syncs only through the namespace directory's descriptor (`SQLiteConnection`, `cs_sqlite_hold_directory`),
///   with `SQLITE_OPEN_NOFOLLOW`: renaming the namespace directory away, or putting another directory or a
///   symbolic link at its name, after the store opened it never gives SQLite another file. A namespace where one
///   of these is a symbolic link or not what the store created is refused (`CacheStoreError.Code.unsafeFile`),
///   and so is one whose name stops naming the opened directory while the store opens it.
/// - Every file and directory the store creates is owner-only (0600 / 0700); an existing namespace directory
///   others may access is tightened to 0700 with a log line. A namespace directory or index file owned by
///   another user (not root) is refused (`.unsafeFile`), also when this user cannot write it: its owner could
///   have stored responses for this user to be served, and could read what this store would write. Only a store
///   configured `readOnly` (someone inspecting it on purpose) opens it.
/// - An open that cannot write (disk full: fewer than `minimumAvailableBytes` available or a write refused for
///   lack of space; an index SQLite cannot set up) falls back to read-only, so what is
///   stored is still served.
/// - The index itself is shared through SQLite WAL with a busy timeout; every write is one `BEGIN IMMEDIATE`
///   transaction. The `-wal` and `-shm` files stay between processes (`SQLITE_FCNTL_PERSIST_WAL`; the last close
///   checkpoints and truncates the WAL to 0 bytes), and an open that finds the schema complete and nothing to
///   recover runs no write transaction, so a process that only reads creates, deletes and syncs nothing.
/// - A store whose directory exists but cannot be written (permissions, a read-only mount) or whose configuration
///   says `readOnly` opens read-only: it creates nothing, runs no recovery, leaves no marker, takes the shared lock
///   only when the lock file can be opened for reading, and opens the index with `SQLITE_OPEN_READONLY` — or, when
///   SQLite cannot set up WAL shared memory without write access and the WAL is empty, as an `immutable=1` URI.
extension CacheStore {
    struct Opened {
        var files: BlobFiles
        var index: StoreIndex
        /// -1 when a read-only store could not open the lock file (it then reads without a lock).
        var lockFD: Int32
        /// The name of the marker the store creates in `sessions/` before its first write; nil for a read-only store.
        var sessionMarker: String?
        var generation: SharedGeneration
        /// Why the store is read-only; nil when it is writable.
        var readOnlyReason: String?
    }

    /// Below this many bytes available on its file system, a store opens read-only (as when a write fails
    /// with "no space left"): 64 KiB, a few index pages and a small body.
    static let minimumAvailableBytes: Int64 = 64 << 10

    /// Checks a namespace name: 1–64 characters of `[A-Za-z0-9._-]`, not `.` or `..`.
    /// - Throws: `CacheStoreError.Code.invalidNamespace`.
    static func validateNamespace(_ name: String) throws(CacheStoreError) {
        let allowed = name.utf8.allSatisfy { c in
            (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 46 || c == 95 || c == 45
        }
        guard !name.isEmpty, name.utf8.count <= 64, allowed, name != ".", name != ".." else {
            throw CacheStoreError(.invalidNamespace, "namespace '\(name)' must be 1-64 characters of [A-Za-z0-9._-]")
        }
    }

    /// Unlocks (`LOCK_UN`, releasing the lock for every copy of the description) and closes a lock descriptor.
    static func releaseLock(_ fd: Int32) {
        guard fd >= 0 else { return }
        _ = cs_lock(fd, CS_LOCK_UNLOCK, 1)
        _ = cs_close(fd)
    }

    static func open(_ configuration: Configuration) throws(CacheStoreError) -> Opened {
        try validateNamespace(configuration.namespace)
        let root = configuration.directory.standardizedFileURL
            .appendingPathComponent(configuration.namespace, isDirectory: true)
        let log: @Sendable (String) -> Void = { configuration.logger("[\(configuration.namespace)] \($0)") }
        var notes = BlobFiles.OpenNotes()
        defer { for warning in notes.warnings { log(warning) } }
        if configuration.readOnly {
            let files = try BlobFiles.open(root: root, create: false, notes: &notes)
            return try openReadOnly(files, configuration, reason: "opened read-only by its configuration", log: log)
        }
        let files: BlobFiles
        do {
            files = try BlobFiles.open(root: root, create: true, notes: &notes)
        } catch {
            // An existing store we may not write: use it read-only (never mkdir what exists).
            guard error.code == .permissionDenied || error.code == .diskFull, BlobFiles.isDirectory(root.path) else {
                throw error
            }
            let existing = try BlobFiles.open(root: root, create: false, notes: &notes)
            try existing.refuseForeignOwner()
            return try openReadOnly(existing, configuration, reason: error.detail, log: log)
        }
        try files.checkIndexFiles()
        try files.refuseForeignOwner()
        if !files.isWritable() {
            return try openReadOnly(files, configuration, reason: "\(files.root.path) is not writable", log: log)
        }
        // A full disk is found here, not by the first body write: an open with nothing to set up or recover
        // writes nothing, so without this check a store would open writable and a download would fail later.
        let available = cs_available_bytes(files.handles.root)
        if !configuration.opensToFreeSpace, available >= 0, available < Self.minimumAvailableBytes,
           files.indexFileSize() != nil {
            return try openReadOnly(files, configuration,
                                    reason: "the disk is full (\(available) bytes available on \(files.root.path))", log: log)
        }
        files.makeFilesOwnerOnly(notes: &notes)
        applyPlatformAttributes(files, configuration, notes: &notes)
        do {
            return try openWritable(files, configuration, log: log)
        } catch {
            // A full disk (or a file system that refuses writes) must not lose what is stored: read it.
            guard error.code == .diskFull || error.code == .permissionDenied
                    || (error.code == .io && files.indexFileSize() != nil) else { throw error }
            log("cannot open for writing (\(error)); opening read-only")
            return try openReadOnly(files, configuration, reason: error.detail, log: log)
        }
    }

    /// Gives the namespace directory and its subdirectories the configured data-protection class, and the
    /// namespace directory the exclude-from-backup flag (which covers everything below it); see
    /// `PlatformIntegration`. A failure is a log line, never an error.
    private static func applyPlatformAttributes(_ files: BlobFiles, _ configuration: Configuration,
                                                notes: inout BlobFiles.OpenNotes) {
        guard configuration.fileProtection != nil || configuration.excludedFromBackup else { return }
        notes.warnings += PlatformIntegration.applyDirectoryAttributes(
            files.root, protection: configuration.fileProtection, excludedFromBackup: configuration.excludedFromBackup)
        guard configuration.fileProtection != nil else { return }
        for sub in BlobFiles.subdirectories {
            notes.warnings += PlatformIntegration.applyDirectoryAttributes(
                files.root.appendingPathComponent(sub, isDirectory: true),
                protection: configuration.fileProtection, excludedFromBackup: false)
        }
    }

    /// The writable open: lock, index, recovery (when exclusive), session marker, generation.
    private static func openWritable(_ files: BlobFiles, _ configuration: Configuration,
                                     log: @escaping @Sendable (String) -> Void) throws(CacheStoreError) -> Opened {
        let lockFD = cs_open_file_at(files.handles.root, "lock", CS_OPEN_READ_WRITE, CS_OPEN_CREATE, 0o600)
        guard lockFD >= 0 else {
            let error = CacheStoreError.posix(cs_errno(), "open \(files.lockPath)")
            throw error
        }
        do throws(CacheStoreError) {
            let exclusive = cs_lock(lockFD, CS_LOCK_EXCLUSIVE, 0) == 0
            if !exclusive, cs_lock(lockFD, CS_LOCK_SHARED, 1) != 0 {
                throw CacheStoreError.posix(cs_errno(), "flock \(files.lockPath)")
            }
            let (index, rebuilt) = try openIndex(files, configuration, exclusive: exclusive, log: log)
            try files.checkRootUnmoved()
            try files.checkIndexFiles()
            if exclusive {
                try recover(index, files, configuration, rebuilt: rebuilt, log: log)
                // Downgrade: another opener may slip in between and recover too, which is harmless because this
                // store has not written anything yet.
                if cs_lock(lockFD, CS_LOCK_SHARED, 1) != 0 { throw CacheStoreError.posix(cs_errno(), "flock \(files.lockPath)") }
            }
            // The marker's name is fixed now; its file is created before this store's first write
            // (`CacheStore.ensureSessionMarker()`), so a store that only reads leaves nothing in `sessions/`.
            let marker = "\(cs_process_id())-\(BlobFiles.newID())"
            let generation = makeGeneration(files, readOnly: false, log: log)
            return Opened(files: files, index: index, lockFD: lockFD, sessionMarker: marker, generation: generation,
                          readOnlyReason: nil)
        } catch {
            releaseLock(lockFD)
            throw error
        }
    }

    /// The shared generation of `files`, logging when it cannot be mapped or is lost later.
    private static func makeGeneration(_ files: BlobFiles, readOnly: Bool,
                                       log: @escaping @Sendable (String) -> Void) -> SharedGeneration {
        let path = files.root.path + "/generation"
        let generation = SharedGeneration(directory: files.handles.root, name: "generation", readOnly: readOnly) {
            log("\(path) was truncated while mapped: the memory tier is bypassed from now on")
        }
        if !generation.isShared, !readOnly {
            log("cannot map \(path): caches will not see other processes' writes")
        }
        return generation
    }

    /// Opens an existing store without writing anything (see the type's comment).
    /// - Throws: `.permissionDenied` when the directory cannot be read or holds no index, or when the index has
    ///   an un-checkpointed WAL that cannot be read without write access; `.corruptIndex` for an unusable index;
    ///   `.unsafeFile` for an index file that is a symbolic link.
    private static func openReadOnly(_ files: BlobFiles, _ configuration: Configuration, reason: String,
                                     log: @escaping @Sendable (String) -> Void) throws(CacheStoreError) -> Opened {
        let root = files.root.path
        guard cs_access_directory(files.handles.root, 0) == 0 else {
            let err = cs_errno()
            var info = cs_file_info()
            let owner = cs_stat_fd(files.handles.root, &info) == 0
                ? " (owner uid \(info.owner), mode \(String(info.permissions, radix: 8)); this process is uid \(cs_user_id()))"
                : ""
            throw CacheStoreError.posix(err, "cannot read the cache at \(root)\(owner)")
        }
        try files.checkIndexFiles()
        guard files.indexFileSize() != nil else {
            throw CacheStoreError(.permissionDenied, "cannot open \(root) read-only: it has no index (\(reason))")
        }
        // A shared lock, when the lock file can be read, keeps a writer's exclusive recovery from deleting bodies
        // this store reads; without one the store still works (a vanished body is a miss).
        var lockFD = cs_open_file_at(files.handles.root, "lock", CS_OPEN_READ, CS_OPEN_EXISTING, 0)
        if lockFD >= 0, cs_lock(lockFD, CS_LOCK_SHARED, 1) != 0 {
            _ = cs_close(lockFD)
            lockFD = -1
        }
        do throws(CacheStoreError) {
            let index = try openIndexReadOnly(files, configuration)
            try files.checkRootUnmoved()
            let generation = makeGeneration(files, readOnly: true, log: log)
            if !configuration.readOnly { log("opened read-only: \(reason)") }
            return Opened(files: files, index: index, lockFD: lockFD, sessionMarker: nil, generation: generation,
                          readOnlyReason: reason)
        } catch {
            releaseLock(lockFD)
            throw error
        }
    }

    /// Opens the index read-only and checks its schema; falls back to `immutable=1` when SQLite cannot open the
    /// WAL database read-only (no `-shm` it may use) and the WAL is empty, so ignoring it loses nothing.
    private static func openIndexReadOnly(_ files: BlobFiles,
                                          _ configuration: Configuration) throws(CacheStoreError) -> StoreIndex {
        func checked(_ mode: SQLiteConnection.Mode) throws(CacheStoreError) -> StoreIndex {
            let index = try openedIndex(files, configuration, mode: mode)
            guard let version = try index.recordedSchemaVersion() else {
                throw CacheStoreError(.corruptIndex, "\(files.indexPath) is empty and cannot be set up read-only")
            }
            guard StoreIndex.readableSchemaVersions.contains(version) else {
                throw CacheStoreError(.corruptIndex, "index schema version \(version), this code reads "
                    + "\(StoreIndex.schemaVersion) (read-only: left in place)")
            }
            return index
        }
        do {
            return try checked(.readOnly)
        } catch {
            guard error.code != .corruptIndex else { throw error }
            let wal = BlobFiles.info(files.handles.root, "index.sqlite-wal")?.size ?? 0
            guard wal == 0 else {
                throw CacheStoreError(.permissionDenied, "cannot read \(files.indexPath) read-only: its write-ahead "
                    + "log holds \(wal) bytes not yet checkpointed, and reading them needs write access (\(error.detail))")
            }
            return try checked(.immutable)
        }
    }

    /// Opens the index; a corrupted index or one of another schema is moved aside and a new one created, but
    /// only by an exclusive opener (else the error is thrown: another live process is using that file).
    private static func openIndex(_ files: BlobFiles, _ configuration: Configuration, exclusive: Bool,
                                  log: (String) -> Void) throws(CacheStoreError) -> (StoreIndex, Bool) {
        do throws(CacheStoreError) {
            let index = try openedIndex(files, configuration)
            let version = try index.recordedSchemaVersion()
            if let version, !StoreIndex.readableSchemaVersions.contains(version) {
                throw CacheStoreError(.corruptIndex, "index schema version \(version), this code reads \(StoreIndex.schemaVersion)")
            }
            try index.setUp()
            if let version, version != StoreIndex.schemaVersion {
                try index.migrate(from: version)
                log("index migrated from schema version \(version) to \(StoreIndex.schemaVersion)")
            }
            return (index, false)
        } catch {
            guard error.code == .corruptIndex, exclusive else { throw error }
            let aside = files.indexPath + ".broken-\(Int(Date().timeIntervalSince1970))-\(BlobFiles.newID().prefix(8))"
            log("index unusable (\(error.detail)); moving it aside to \(aside) and starting an empty index")
            let asideName = URL(fileURLWithPath: aside).lastPathComponent
            for suffix in ["", "-wal", "-shm"] {
                if cs_rename_at(files.handles.root, "index.sqlite" + suffix, files.handles.root, asideName + suffix) != 0,
                   cs_classify_error(cs_errno()) != CS_ERROR_NOT_FOUND {
                    throw CacheStoreError.posix(cs_errno(), "move aside \(files.indexPath + suffix)")
                }
            }
            let index = try openedIndex(files, configuration)
            try index.setUp()
            return (index, true)
        }
    }

    /// Opens the index of `files` through the namespace directory descriptor (see `SQLiteConnection`), with the
    /// test hook steps `"index-opening"` (before SQLite opens anything) and `"index-opened"` (after it opened the
    /// database file, before it read it and opened the `-wal` and `-shm` files).
    private static func openedIndex(_ files: BlobFiles, _ configuration: Configuration,
                                    mode: SQLiteConnection.Mode = .readWrite) throws(CacheStoreError) -> StoreIndex {
        try configuration.faultInjection?("index-opening")
        let index = try StoreIndex(files, busyTimeout: configuration.busyTimeout, mode: mode)
        try configuration.faultInjection?("index-opened")
        return index
    }

    /// Destructive recovery, run only under the exclusive lock (see the type's comment).
    private static func recover(_ index: StoreIndex, _ files: BlobFiles, _ configuration: Configuration,
                                rebuilt: Bool, log: (String) -> Void) throws(CacheStoreError) {
        let keptPartials = try recoverPartials(index, files, log: log)
        let temporary = BlobFiles.list(files.handles.tmp).filter { !keptPartials.contains($0) }
        for name in temporary { _ = BlobFiles.removeAnything(files.handles.tmp, name) }
        let deadSessions = BlobFiles.list(files.handles.sessions)
        for name in deadSessions { _ = BlobFiles.removeAnything(files.handles.sessions, name) }
        let unclean = rebuilt || !deadSessions.isEmpty

        var doomed: [String] = []
        var missing = 0
        // Pending rows (never written by this version, which inserts a row only once its body is in place),
        // session rows, and rows unused for longer than maxAge. Each condition has its own index: O(matches).
        let cutoff = configuration.maxAge.map { configuration.currentTime().timeIntervalSince1970 - $0 } ?? -Double.infinity
        // After a clean shutdown with nothing to delete, no write transaction (the common open of a process
        // answering from the cache).
        var rowWork = unclean
        if !rowWork { rowWork = try index.hasRowsToRecover(unusedBefore: cutoff) }
        let deletedRows = !rowWork ? 0 : try index.db.transaction { () throws(CacheStoreError) -> Int in
            var count = 0
            for removed in try index.deleteIncomplete() + index.deleteSessionRows() + index.deleteUnused(before: cutoff) {
                count += 1
                if let blob = removed.blobID { doomed.append(blob) }
            }
            if unclean {
                let fileBacked = try index.fileBackedRows()
                for row in fileBacked {
                    guard let blob = row.blobID, files.blobSize(blob) == nil else { continue }
                    _ = try index.delete(row.info.key)
                    missing += 1
                }
                try index.recomputeTotals()
            }
            return count
        }
        for blob in doomed { files.removeBlob(blob) }
        var orphans = 0
        if unclean {
            let named = try index.allBlobIDs()
            for name in BlobFiles.list(files.handles.blobs) where !named.contains(name) {
                if let failure = BlobFiles.removeAnything(files.handles.blobs, name) {
                    log("recovery: cannot remove blobs/\(name): \(failure)")
                } else {
                    orphans += 1
                }
            }
        }
        if unclean || !temporary.isEmpty || deletedRows > 0 {
            // Only what was found: an unclean shutdown that left everything consistent says just that.
            let removed = [(temporary.count, "temporary file(s)"), (deletedRows, "pending/session/expired row(s)"),
                           (missing, "row(s) without a body"), (orphans, "orphan blob(s)")]
                .filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
            log("recovery\(unclean ? " after an unclean shutdown" : ""): "
                + (removed.isEmpty ? "nothing to remove" : "removed " + removed.joined(separator: ", ")))
        }
    }

    /// Keeps the partial entries (see `CacheStore+Partials.swift`) whose file in `tmp/` (named as the store names
    /// its files) is a regular file of this user with no other name, at least as long as its verified prefix, cut
    /// to that prefix (bytes after the last checkpoint were never checksummed); deletes the other partial rows and
    /// releases every owner (no store has the namespace open).
    /// The prefix's checksum is checked when the partial is resumed. Returns the file names kept.
    private static func recoverPartials(_ index: StoreIndex, _ files: BlobFiles,
                                        log: (String) -> Void) throws(CacheStoreError) -> Set<String> {
        var kept = Set<String>()
        var dropped = 0
        guard try index.hasPartialRows() else { return kept }
        try index.db.transaction { () throws(CacheStoreError) in
            for row in try index.allPartials() {
                // Only a name the store made, naming a regular file of this user with no other name, is cut: an
                // edited row's `../x` is never opened, and a hard link planted in `tmp/` is never written (its
                // name there is removed with the rest of `tmp/`, the other file is left as it is).
                var usable = false
                switch files.openPartial(row.file) {
                case .success(let (fd, info)):
                    usable = info.size >= row.verified && row.verified > 0
                        && (info.size == row.verified || cs_truncate(fd, row.verified) == 0)
                    _ = cs_close(fd)
                case .failure(let error):
                    if error.code == .unsafeFile { log("recovery: \(error.detail)") }
                }
                if usable {
                    kept.insert(row.file)
                } else {
                    try index.deletePartial(file: row.file)
                    dropped += 1
                }
            }
            try index.releaseAllPartials()
        }
        if dropped > 0 { log("recovery: removed \(dropped) partial entr\(dropped == 1 ? "y" : "ies") without a usable body") }
        return kept
    }

    /// The namespaces stored under `directory` (subdirectories with a valid name holding an index), sorted.
    public static func namespaces(in directory: URL) -> [String] {
        let root = directory.standardizedFileURL.path
        let fd = cs_open_directory(root)
        guard fd >= 0 else { return [] }
        defer { _ = cs_close(fd) }
        return BlobFiles.list(fd).filter { name in
            guard (try? validateNamespace(name)) != nil, let info = BlobFiles.info(fd, name), info.isDirectory else {
                return false
            }
            return BlobFiles.fileSize(root + "/" + name + "/index.sqlite") != nil
        }.sorted()
    }

    /// Erases a whole namespace: its directory is first renamed out of the way (atomically invisible to new
    /// opens), then deleted. Stores still open on it keep working on the detached files until closed. Erasing
    /// a namespace that does not exist does nothing.
    /// - Throws: `CacheStoreError` — `.invalidNamespace`, `.permissionDenied`, `.io`.
    public static func removeNamespace(_ namespace: String, in directory: URL) throws(CacheStoreError) {
        try validateNamespace(namespace)
        let root = directory.standardizedFileURL
        let path = root.appendingPathComponent(namespace, isDirectory: true).path
        // "~" cannot occur in a namespace name, so the detached directory is never listed or opened.
        let detachedName = "~removed-\(BlobFiles.newID())"
        let detached = root.appendingPathComponent(detachedName, isDirectory: true).path
        let parentFD = cs_open_directory(root.path)
        guard parentFD >= 0 else {
            if cs_classify_error(cs_errno()) == CS_ERROR_NOT_FOUND { return }
            throw CacheStoreError.posix(cs_errno(), "open \(root.path)")
        }
        defer { _ = cs_close(parentFD) }
        if cs_rename_at(parentFD, namespace, parentFD, detachedName) != 0 {
            if cs_classify_error(cs_errno()) == CS_ERROR_NOT_FOUND { return }
            throw CacheStoreError.posix(cs_errno(), "rename \(path)")
        }
        // Deleted through descriptors opened without following links: a symbolic link in the tree is removed,
        // never what it points to.
        if let failure = BlobFiles.removeAnything(parentFD, detachedName) {
            throw CacheStoreError(.io, "remove \(detached): \(failure)")
        }
    }
}
