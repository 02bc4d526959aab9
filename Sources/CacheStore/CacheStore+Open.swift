import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Opening, crash recovery and namespaces.
///
/// Locking protocol for several processes on one namespace directory:
/// - Every open store holds a shared `flock` on `<namespace>/lock` for its whole life.
/// - Opening first tries an exclusive, non-blocking `flock`. Only a process that gets it — so no other process
///   has the namespace open and no write can be in flight — runs the destructive recovery: empty `tmp/`, delete
///   pending and session rows and rows unused for longer than `maxAge`, and after an unclean shutdown (a marker
///   left in `sessions/`) or a rebuilt index, delete rows whose blob is missing and blobs no row names, then
///   recompute the totals. It then downgrades to
///   the shared lock. A process that does not get the exclusive lock waits for a shared one and skips recovery, so
///   it can never delete a blob another live process is about to commit.
/// - Each open store leaves a marker `sessions/<pid>-<id>` that it deletes when it is deinitialised; a marker
///   found by an exclusive opener therefore belongs to a process that died.
/// - The index itself is shared through SQLite WAL with a busy timeout; every write is one `BEGIN IMMEDIATE`
///   transaction.
extension CacheStore {
    struct Opened {
        var files: BlobFiles
        var index: StoreIndex
        var lockFD: Int32
        var sessionMarker: String
        var generation: SharedGeneration
    }

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

    static func open(_ configuration: Configuration) throws(CacheStoreError) -> Opened {
        try validateNamespace(configuration.namespace)
        let files = BlobFiles(root: configuration.directory.standardizedFileURL
            .appendingPathComponent(configuration.namespace, isDirectory: true))
        try files.createDirectories()
        let log: (String) -> Void = { configuration.logger("[\(configuration.namespace)] \($0)") }

        let lockFD = Glibc.open(files.lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockFD >= 0 else { throw CacheStoreError.posix(errno, "open \(files.lockPath)") }
        do throws(CacheStoreError) {
            let exclusive = flock(lockFD, LOCK_EX | LOCK_NB) == 0
            if !exclusive, flock(lockFD, LOCK_SH) != 0 {
                throw CacheStoreError.posix(errno, "flock \(files.lockPath)")
            }
            let (index, rebuilt) = try openIndex(files, configuration, exclusive: exclusive, log: log)
            if exclusive {
                try recover(index, files, configuration, rebuilt: rebuilt, log: log)
                // Downgrade: another opener may slip in between and recover too, which is harmless because this
                // store has not written anything yet.
                if flock(lockFD, LOCK_SH) != 0 { throw CacheStoreError.posix(errno, "flock \(files.lockPath)") }
            }
            let marker = files.sessionsPath + "/\(getpid())-\(BlobFiles.newID())"
            let markerFD = Glibc.open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            guard markerFD >= 0 else { throw CacheStoreError.posix(errno, "create \(marker)") }
            close(markerFD)
            let generation = SharedGeneration(path: files.root.appendingPathComponent("generation").path)
            if !generation.isShared {
                log("cannot map \(files.root.path)/generation: caches will not see other processes' writes")
            }
            return Opened(files: files, index: index, lockFD: lockFD, sessionMarker: marker, generation: generation)
        } catch {
            close(lockFD)
            throw error
        }
    }

    /// Opens the index; a corrupted index or one of another schema is moved aside and a new one created, but
    /// only by an exclusive opener (else the error is thrown: another live process is using that file).
    private static func openIndex(_ files: BlobFiles, _ configuration: Configuration, exclusive: Bool,
                                  log: (String) -> Void) throws(CacheStoreError) -> (StoreIndex, Bool) {
        do throws(CacheStoreError) {
            let index = try StoreIndex(path: files.indexPath, busyTimeout: configuration.busyTimeout)
            let version = try index.recordedSchemaVersion()
            if let version, version != StoreIndex.schemaVersion {
                throw CacheStoreError(.corruptIndex, "index schema version \(version), this code reads \(StoreIndex.schemaVersion)")
            }
            try index.setUp()
            return (index, false)
        } catch {
            guard error.code == .corruptIndex, exclusive else { throw error }
            let aside = files.indexPath + ".broken-\(Int(Date().timeIntervalSince1970))-\(BlobFiles.newID().prefix(8))"
            log("index unusable (\(error.detail)); moving it aside to \(aside) and starting an empty index")
            for suffix in ["", "-wal", "-shm"] {
                if rename(files.indexPath + suffix, aside + suffix) != 0, errno != ENOENT {
                    throw CacheStoreError.posix(errno, "move aside \(files.indexPath + suffix)")
                }
            }
            let index = try StoreIndex(path: files.indexPath, busyTimeout: configuration.busyTimeout)
            try index.setUp()
            return (index, true)
        }
    }

    /// Destructive recovery, run only under the exclusive lock (see the type's comment).
    private static func recover(_ index: StoreIndex, _ files: BlobFiles, _ configuration: Configuration,
                                rebuilt: Bool, log: (String) -> Void) throws(CacheStoreError) {
        let temporary = BlobFiles.list(files.tmpPath)
        for name in temporary { BlobFiles.remove(files.tmpPath + "/" + name) }
        let deadSessions = BlobFiles.list(files.sessionsPath)
        for name in deadSessions { BlobFiles.remove(files.sessionsPath + "/" + name) }
        let unclean = rebuilt || !deadSessions.isEmpty

        var doomed: [String] = []
        var missing = 0
        let deletedRows = try index.db.transaction { () throws(CacheStoreError) -> Int in
            var count = 0
            // Pending rows (never written by this version, which inserts a row only once its body is in place),
            // session rows, and rows unused for longer than maxAge. Each condition has its own index: O(matches).
            let cutoff = configuration.maxAge.map { configuration.now().timeIntervalSince1970 - $0 } ?? -Double.infinity
            for condition in ["state <> 1", "session = 1", "pinned = 0 AND accessed < ?"] {
                for (_, blob) in try index.delete(where: condition, bind: { $0.bind(1, cutoff) }) {
                    count += 1
                    if let blob { doomed.append(blob) }
                }
            }
            if unclean {
                let fileBacked = try index.rows(where: "blob_id IS NOT NULL", order: "id")
                for row in fileBacked {
                    guard let blob = row.blobID, BlobFiles.fileSize(files.blobPath(blob)) == nil else { continue }
                    _ = try index.delete(where: "primary_key = ? AND variant = ?") { s in
                        s.bind(1, row.info.key.primary)
                        s.bind(2, row.info.key.variant)
                    }
                    missing += 1
                }
                try index.recomputeTotals()
            }
            return count
        }
        for blob in doomed { BlobFiles.remove(files.blobPath(blob)) }
        var orphans = 0
        if unclean {
            let named = try index.allBlobIDs()
            for name in BlobFiles.list(files.blobsPath) where !named.contains(name) {
                BlobFiles.remove(files.blobPath(name))
                orphans += 1
            }
        }
        if unclean || !temporary.isEmpty || deletedRows > 0 {
            log("recovery\(unclean ? " after an unclean shutdown" : ""): removed \(temporary.count) temporary file(s), "
                + "\(deletedRows) pending/session/expired row(s), \(missing) row(s) without a body, \(orphans) orphan blob(s)")
        }
    }

    /// The namespaces stored under `directory` (subdirectories with a valid name holding an index), sorted.
    public static func namespaces(in directory: URL) -> [String] {
        let root = directory.standardizedFileURL.path
        return BlobFiles.list(root).filter { name in
            (try? validateNamespace(name)) != nil && BlobFiles.fileSize(root + "/" + name + "/index.sqlite") != nil
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
        let detached = root.appendingPathComponent("~removed-\(BlobFiles.newID())", isDirectory: true).path
        if rename(path, detached) != 0 {
            if errno == ENOENT { return }
            throw CacheStoreError.posix(errno, "rename \(path)")
        }
        do {
            try FileManager.default.removeItem(atPath: detached)
        } catch {
            throw CacheStoreError(.io, "remove \(detached): \(error.localizedDescription)")
        }
    }
}
