import Foundation
import CSQLite

/// One row of the index: the entry's information and where its body is (inline bytes or a blob id).
struct IndexRow: Sendable {
    var info: EntryInfo
    var blobID: String?
    var inlineBody: Data?
    /// The row's `id` and its `created` column as stored, when it was read by a point lookup (else 0): what
    /// ``StoreIndex`` needs to read a cached row's inline body again by rowid and tell whether it is still that row.
    var rowID: Int64 = 0
    var storedCreated: Double = 0
}

/// A row deleted from the index: its key and the blob file it named (nil for an inline body), which the caller
/// deletes once the transaction committed.
struct RemovedRow: Sendable {
    var key: StoreKey
    var blobID: String?
    /// Whether the row was pinned.
    var pinned = false
}

/// The value of the `state` column. Every row this version writes is ``complete``: it inserts a row only once
/// its body is in place. A row in any other state (pending, from a writer that inserted rows before their body)
/// is deleted when the store opens.
enum RowState: Int64 {
    /// The row and its body are in place.
    case complete = 1
}

/// The SQLite index of one namespace: schema, every query the store runs (no SQL outside this type), and the
/// totals kept by triggers.
///
/// Totals (`entries`, `bytes`) live in a one-row table maintained by triggers in the same transaction as the row
/// change, so they cannot drift from `SUM(size)`; they are recomputed anyway after an unclean shutdown. The
/// pinned rows' totals are kept the same way (`pinned_totals`), so the room pinned entries leave is one read.
/// Not thread-safe: `CacheStore` holds its lock around every call (which is why the properties the hit path
/// touches opt out of dynamic exclusivity checks).
final class StoreIndex {
    /// The schema this code writes and reads: 2 adds the `partials` table to version 1's tables.
    static let schemaVersion = 2
    /// Older schemas this code opens: a writable open migrates them (``migrate(from:)``), a read-only one reads
    /// them as they are (no partials).
    static let readableSchemaVersions: Set<Int> = [1, 2]

    let db: SQLiteConnection
    /// Access times recorded by reads, written in the next transaction (seconds since 1970).
    @exclusivity(unchecked) var pendingTouches: [StoreKey: Double] = [:]
    /// Rows read recently, so a repeated disk hit of a file-backed entry skips SQLite, and one of an inline entry
    /// only reads its body, by rowid (no index search, no other column). Valid for one shared generation: emptied
    /// when any process (this one included) commits a write. Never holds bodies.
    @exclusivity(unchecked) private var rowCache: [StoreKey: IndexRow] = [:]
    @exclusivity(unchecked) private var rowCacheGeneration: UInt64 = 0
    static let rowCacheLimit = 10_000

    /// Empties the row cache (after a write).
    func invalidateRowCache() {
        rowCache.removeAll(keepingCapacity: true)
    }

    /// The columns of an ``IndexRow``, in the order ``decode(_:)`` reads them; the inline body comes last.
    private static let rowColumns = "primary_key, variant, metadata, size, crc, session, pinned, created, accessed, blob_id"
    /// ``rowColumns`` with the inline body (for writing).
    private static let columns = rowColumns + ", inline_body"
    /// `state = complete`, for conditions.
    private static let isComplete = "state = \(RowState.complete.rawValue)"

    /// The SELECT list of a read: ``rowColumns``, then the inline body when `withBody`, else NULL.
    private static func selectList(withBody: Bool) -> String {
        rowColumns + (withBody ? ", inline_body" : ", NULL")
    }

    /// Whether the `partials` table was seen (it is never dropped once there; see `hasPartialsTable()`).
    var hasPartials = false
    /// Whether the `pinned_totals` table was seen (it is never dropped once there).
    private var hasPinnedTotals = false

    /// Hit and miss counts of this process already added to the persisted counters (see `flushCounters`).
    var flushedCounters = CacheStoreStatistics.Counters()

    /// Opens `index.sqlite` of `files` through its namespace directory descriptor (see `SQLiteConnection`).
    init(_ files: BlobFiles, busyTimeout: TimeInterval, mode: SQLiteConnection.Mode = .readWrite) throws(CacheStoreError) {
        db = try SQLiteConnection(directory: files.handles.root, name: "index.sqlite", displayPath: files.indexPath,
                                  busyTimeout: busyTimeout, mode: mode)
    }

    /// The schema version recorded in the file: nil for a new (empty) database.
    /// - Throws: `.corruptIndex` when the file is not a usable database.
    func recordedSchemaVersion() throws(CacheStoreError) -> Int? {
        let tables = try db.prepare("SELECT count(*) FROM sqlite_master WHERE type='table' AND name='meta'")
        guard try tables.step(), tables.int64(0) == 1 else {
            tables.reset()
            let any = try db.prepare("SELECT count(*) FROM sqlite_master")
            let count = try any.step() ? any.int64(0) : 0
            any.reset()
            if count > 0 { throw CacheStoreError(.corruptIndex, "index has tables but no meta table") }
            return nil
        }
        tables.reset()
        let row = try db.prepare("SELECT value FROM meta WHERE name='schema_version'")
        defer { row.reset() }
        guard try row.step(), let text = row.string(0), let version = Int(text) else {
            throw CacheStoreError(.corruptIndex, "meta table has no schema_version row")
        }
        return version
    }

    /// WAL frames after which a commit checkpoints (`PRAGMA wal_autocheckpoint`; SQLite's default is 1,000).
    /// A checkpoint runs inside the commit that triggers it, under the index lock, and with `synchronous=NORMAL`
    /// it fsyncs the WAL and the database: milliseconds during which no other commit proceeds. An entry's commit
    /// appends about five pages, so the default checkpointed every ~200 stored entries; 8,192 frames (32 MiB of
    /// WAL at most) checkpoint every ~1,600 entries, with the same bytes written out in fewer sync barriers.
    static let autoCheckpointFrames = 8_192

    /// Switches to WAL, keeps the `-wal` and `-shm` files between processes (the last close checkpoints and
    /// truncates the WAL to 0 bytes instead of deleting both), checkpoints every ``autoCheckpointFrames`` frames,
    /// and creates the schema when missing (an index already complete at ``schemaVersion`` is left alone: no
    /// write transaction).
    /// - Throws: `CacheStoreError` from SQLite.
    func setUp() throws(CacheStoreError) {
        try db.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=OFF; PRAGMA journal_size_limit=0; PRAGMA wal_autocheckpoint=\(Self.autoCheckpointFrames);")
        db.keepWriteAheadLogFiles()
        guard !isSetUpAtCurrentVersion() else { return }
        try db.transaction { () throws(CacheStoreError) in
            try db.execute("""
            CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value TEXT NOT NULL);
            INSERT OR IGNORE INTO meta(name, value) VALUES('schema_version', '\(Self.schemaVersion)');
            INSERT OR IGNORE INTO meta(name, value) VALUES('format', 'DownloadCache.CacheStore');
            INSERT OR IGNORE INTO meta(name, value) VALUES('memory_hits', '0'), ('memory_misses', '0'),
                ('disk_hits', '0'), ('disk_misses', '0');
            INSERT OR IGNORE INTO meta(name, value) VALUES('key_secret', lower(hex(randomblob(32))));
            CREATE TABLE IF NOT EXISTS entries(
                id INTEGER PRIMARY KEY,
                primary_key TEXT NOT NULL, variant TEXT NOT NULL,
                metadata BLOB NOT NULL, size INTEGER NOT NULL, crc INTEGER NOT NULL,
                session INTEGER NOT NULL, pinned INTEGER NOT NULL,
                created REAL NOT NULL, accessed REAL NOT NULL,
                blob_id TEXT, inline_body BLOB,
                state INTEGER NOT NULL DEFAULT \(RowState.complete.rawValue),
                UNIQUE(primary_key, variant));
            CREATE INDEX IF NOT EXISTS entries_lru ON entries(pinned, accessed);
            CREATE INDEX IF NOT EXISTS entries_session ON entries(session) WHERE session = 1;
            CREATE INDEX IF NOT EXISTS entries_pending ON entries(state) WHERE state <> \(RowState.complete.rawValue);
            CREATE TABLE IF NOT EXISTS totals(id INTEGER PRIMARY KEY CHECK (id = 1),
                entries INTEGER NOT NULL, bytes INTEGER NOT NULL);
            INSERT OR IGNORE INTO totals(id, entries, bytes) VALUES(1, 0, 0);
            CREATE TRIGGER IF NOT EXISTS entries_insert AFTER INSERT ON entries BEGIN
                UPDATE totals SET entries = entries + 1, bytes = bytes + NEW.size WHERE id = 1; END;
            CREATE TRIGGER IF NOT EXISTS entries_delete AFTER DELETE ON entries BEGIN
                UPDATE totals SET entries = entries - 1, bytes = bytes - OLD.size WHERE id = 1; END;
            CREATE TRIGGER IF NOT EXISTS entries_resize AFTER UPDATE OF size ON entries BEGIN
                UPDATE totals SET bytes = bytes - OLD.size + NEW.size WHERE id = 1; END;
            """)
            try createPartialsTable()
            try createPinnedTotals()
        }
    }

    /// Brings an index of schema `version` (one of ``readableSchemaVersions``) to ``schemaVersion`` after
    /// ``setUp()`` created the missing tables: version 1 lacks only the `partials` table, so every stored entry
    /// is kept as it is.
    /// - Throws: `CacheStoreError` from SQLite.
    func migrate(from version: Int) throws(CacheStoreError) {
        guard version != Self.schemaVersion else { return }
        try db.transaction { () throws(CacheStoreError) in
            try createPartialsTable()
            try setSchemaVersion(Self.schemaVersion)
        }
    }

    // MARK: Reading

    private func decode(_ s: SQLiteStatement) -> IndexRow {
        let key = StoreKey(primary: s.string(0) ?? "", variant: s.string(1) ?? "")
        let info = EntryInfo(
            key: key, metadata: s.data(2) ?? Data(), bodySize: s.int64(3), checksum: UInt32(truncatingIfNeeded: s.int64(4)),
            storageClass: s.int64(5) == 1 ? .session : .permanent, isPinned: s.int64(6) != 0,
            createdAt: Date(timeIntervalSince1970: s.double(7)), lastAccessedAt: Date(timeIntervalSince1970: s.double(8)))
        return IndexRow(info: info, blobID: s.string(9), inlineBody: s.data(10))
    }

    /// The complete row for `key`, with the inline body when `withBody` (else `inlineBody` is nil).
    /// `generation` is the shared generation read before this call: rows cached under another one are dropped;
    /// nil disables the cache (no shared generation to keep it coherent with other processes).
    /// `touching` (seconds since 1970), when given, records a use of a found row: it becomes the row's pending
    /// access time and its `lastAccessedAt`.
    /// - Throws: `CacheStoreError` from SQLite.
    ///
    /// With `holdingRead`, the lookup runs in a read transaction kept open for the lookups that follow
    /// (`SQLiteConnection.beginHeldRead()`; the caller ends it soon after), valid for one shared generation:
    /// one opened under another generation is ended first, since its snapshot may predate a committed write.
    func row(for key: StoreKey, withBody: Bool, generation: UInt64?, touching: Double? = nil,
             holdingRead: Bool = false) throws(CacheStoreError) -> IndexRow? {
        guard let generation else { return try row(for: key, withBody: withBody, touching: touching) }
        if generation != rowCacheGeneration {
            rowCache.removeAll(keepingCapacity: true)
            rowCacheGeneration = generation
        }
        if var cached = rowCache[key] {
            guard withBody, cached.blobID == nil else {
                applyTouch(to: &cached, touching: touching)
                return cached
            }
            prepareRead(generation: generation, holdingRead: holdingRead)
            if let body = try inlineBody(of: cached) {
                cached.inlineBody = body
                applyTouch(to: &cached, touching: touching)
                return cached
            }
            rowCache[key] = nil  // changed by a commit the generation does not show yet: look it up in full
        } else {
            prepareRead(generation: generation, holdingRead: holdingRead)
        }
        let row = try row(for: key, withBody: withBody, touching: touching)
        if var cachable = row, cachable.rowID != 0 {
            cachable.inlineBody = nil  // the cache never holds bodies
            if rowCache.count >= Self.rowCacheLimit { rowCache.removeAll(keepingCapacity: true) }
            rowCache[key] = cachable
        }
        return row
    }

    /// Before reading SQLite for generation `generation`: ends a held read transaction opened under another
    /// generation, and opens one when `holdingRead` and none is open.
    @inline(__always)
    private func prepareRead(generation: UInt64, holdingRead: Bool) {
        if db.heldRead != 0, heldReadGeneration != generation { db.endHeldRead() }
        if holdingRead, db.heldRead == 0, db.beginHeldRead() != nil { heldReadGeneration = generation }
    }

    /// The inline body of the cached row `cached`, read by rowid; nil when that rowid no longer holds the same
    /// version of the row (its key, size, crc32 or creation time differ, or it has no inline body).
    /// - Throws: `CacheStoreError` from SQLite.
    private func inlineBody(of cached: IndexRow) throws(CacheStoreError) -> Data? {
        let statement: OpaquePointer
        if let prepared = bodyByRowID {
            statement = prepared
        } else {
            statement = try db.prepare("""
                SELECT inline_body FROM entries
                WHERE id = ?1 AND size = ?2 AND crc = ?3 AND created = ?4 AND inline_body IS NOT NULL AND \(Self.isComplete)
                """).handle
            bodyByRowID = statement
        }
        sqlite3_bind_int64(statement, 1, cached.rowID)
        sqlite3_bind_int64(statement, 2, cached.info.bodySize)
        sqlite3_bind_int64(statement, 3, Int64(cached.info.checksum))
        sqlite3_bind_double(statement, 4, cached.storedCreated)
        let rc = sqlite3_step(statement)
        let body = rc == SQLITE_ROW ? Self.blob(statement, 0) : nil
        let message = rc == SQLITE_ROW || rc == SQLITE_DONE ? nil : db.errorMessage
        sqlite3_reset(statement)
        if let message {
            db.endHeldRead()
            throw CacheStoreError.sqlite(rc, "step: \(message)")
        }
        return body
    }

    /// Sets `row`'s last access: `touching` (recorded as pending), else the pending access time if any.
    @inline(__always)
    private func applyTouch(to row: inout IndexRow, touching: Double?) {
        if let touching {
            pendingTouches[row.info.key] = touching
            row.info.lastAccessedAt = Date(timeIntervalSince1970: touching)
        } else if let touched = pendingTouches[row.info.key] {
            row.info.lastAccessedAt = Date(timeIntervalSince1970: touched)
        }
    }

    /// The statements of the point lookup (``row(for:withBody:touching:)``), with and without the inline body:
    /// prepared once (`SQLITE_PREPARE_PERSISTENT`) and kept, so a lookup builds no SQL text and hashes none.
    /// When the hit path last looked a key up (the coarse clock, seconds), to tell a burst of hits.
    @exclusivity(unchecked) var lastLookup: Double = 0
    /// The shared generation the held read transaction (`db.heldRead`) was opened under.
    @exclusivity(unchecked) private var heldReadGeneration: UInt64 = 0
    @exclusivity(unchecked) private var bodyByRowID: OpaquePointer?
    @exclusivity(unchecked) private var lookupWithBody: OpaquePointer?
    @exclusivity(unchecked) private var lookupWithoutBody: OpaquePointer?

    /// The point lookup's SQL; the key columns are not selected (the caller has the key).
    private static func lookupSQL(withBody: Bool) -> String {
        """
        SELECT metadata, size, crc, session, pinned, created, accessed, blob_id, \(withBody ? "inline_body" : "NULL"), id
        FROM entries WHERE primary_key = ?1 AND variant = ?2 AND \(isComplete)
        """
    }

    /// The complete row for `key` from SQLite, with the inline body when `withBody`; `touching` as in
    /// ``row(for:withBody:generation:touching:)``.
    ///
    /// The key is bound without a copy (`SQLITE_STATIC`, unbound again before returning) and each column is
    /// copied once, straight from SQLite's buffer into the row.
    /// - Throws: `CacheStoreError` from SQLite.
    func row(for key: StoreKey, withBody: Bool, touching: Double? = nil) throws(CacheStoreError) -> IndexRow? {
        let statement: OpaquePointer
        if let prepared = withBody ? lookupWithBody : lookupWithoutBody {
            statement = prepared
        } else {
            statement = try db.prepare(Self.lookupSQL(withBody: withBody)).handle
            if withBody { lookupWithBody = statement } else { lookupWithoutBody = statement }
        }
        var found: IndexRow?
        // SQLITE_STATIC (a nil destructor): SQLite reads the key's bytes in place during the step.
        let rc = key.primary.withCString { primary in
            key.variant.withCString { variant -> Int32 in
                sqlite3_bind_text(statement, 1, primary, -1, nil)
                sqlite3_bind_text(statement, 2, variant, -1, nil)
                let rc = sqlite3_step(statement)
                if rc == SQLITE_ROW { found = Self.decodeLookup(statement, key: key) }
                return rc
            }
        }
        let message = rc == SQLITE_ROW || rc == SQLITE_DONE ? nil : db.errorMessage
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)  // the key's bytes are not valid after this call
        if let message {
            db.endHeldRead()
            throw CacheStoreError.sqlite(rc, "step: \(message)")
        }
        guard var row = found else { return nil }
        applyTouch(to: &row, touching: touching)
        return row
    }

    /// The row a lookup statement is on (columns as in ``lookupSQL(withBody:)``).
    private static func decodeLookup(_ s: OpaquePointer, key: StoreKey) -> IndexRow {
        let info = EntryInfo(
            key: key, metadata: blob(s, 0) ?? Data(), bodySize: sqlite3_column_int64(s, 1),
            checksum: UInt32(truncatingIfNeeded: sqlite3_column_int64(s, 2)),
            storageClass: sqlite3_column_int64(s, 3) == 1 ? .session : .permanent,
            isPinned: sqlite3_column_int64(s, 4) != 0,
            createdAt: Date(timeIntervalSince1970: sqlite3_column_double(s, 5)),
            lastAccessedAt: Date(timeIntervalSince1970: sqlite3_column_double(s, 6)))
        let blobID = sqlite3_column_text(s, 7).map { String(cString: $0) }
        return IndexRow(info: info, blobID: blobID, inlineBody: blob(s, 8), rowID: sqlite3_column_int64(s, 9),
                        storedCreated: sqlite3_column_double(s, 5))
    }

    /// Column `column` as bytes: nil for NULL, else one copy of SQLite's buffer.
    @inline(__always)
    private static func blob(_ s: OpaquePointer, _ column: Int32) -> Data? {
        if sqlite3_column_type(s, column) == SQLITE_NULL { return nil }
        guard let pointer = sqlite3_column_blob(s, column) else { return Data() }
        let count = Int(sqlite3_column_bytes(s, column))
        return count > 0 ? Data(bytes: pointer, count: count) : Data()
    }

    /// The complete rows of every variant of `primary` (no inline bodies), ordered by variant.
    /// - Throws: `CacheStoreError` from SQLite.
    func variants(of primary: String) throws(CacheStoreError) -> [IndexRow] {
        try rows(where: "primary_key = ? AND \(Self.isComplete)", order: "variant") { $0.bind(1, primary) }
    }

    /// Every complete row (no inline bodies), ordered by key.
    /// - Throws: `CacheStoreError` from SQLite.
    func completeRows() throws(CacheStoreError) -> [IndexRow] {
        try rows(where: Self.isComplete, order: "primary_key, variant")
    }

    /// Every row whatever its state (no inline bodies), in insertion order; for `verify`.
    /// - Throws: `CacheStoreError` from SQLite.
    func allRows() throws(CacheStoreError) -> [IndexRow] {
        try rows(where: "1", order: "id")
    }

    /// Every row whose body is a blob file (no inline bodies), in insertion order.
    /// - Throws: `CacheStoreError` from SQLite.
    func fileBackedRows() throws(CacheStoreError) -> [IndexRow] {
        try rows(where: "blob_id IS NOT NULL", order: "id")
    }

    /// The next `limit` unpinned rows to evict: least recently accessed first (no inline bodies).
    /// - Throws: `CacheStoreError` from SQLite.
    func lruBatch(limit: Int) throws(CacheStoreError) -> [IndexRow] {
        try rows(where: "pinned = 0", order: "accessed, id", limit: limit)
    }

    /// Rows matching `condition` (no inline bodies), in `order`.
    private func rows(where condition: String, order: String, limit: Int? = nil,
                      bind: (SQLiteStatement) -> Void = { _ in }) throws(CacheStoreError) -> [IndexRow] {
        let limitClause = limit.map { " LIMIT \($0)" } ?? ""
        let s = try db.prepare("""
            SELECT \(Self.selectList(withBody: false))
            FROM entries WHERE \(condition) ORDER BY \(order)\(limitClause)
            """)
        bind(s)
        defer { s.reset() }
        var result: [IndexRow] = []
        while try s.step() {
            var row = decode(s)
            if let touched = pendingTouches[row.info.key] {
                row.info.lastAccessedAt = Date(timeIntervalSince1970: touched)
            }
            result.append(row)
        }
        return result
    }

    /// `(entries, bytes)` from the totals table.
    /// - Throws: `CacheStoreError` from SQLite.
    func totals() throws(CacheStoreError) -> (entries: Int, bytes: Int64) {
        let s = try db.prepare("SELECT entries, bytes FROM totals WHERE id = 1")
        defer { s.reset() }
        guard try s.step() else { return (0, 0) }
        return (Int(s.int64(0)), s.int64(1))
    }

    /// Whether the totals row matches `(COUNT(*), SUM(size))` of the rows, both read by one statement, so from one
    /// snapshot: a commit of another process between two reads would make them differ without anything wrong.
    /// - Throws: `CacheStoreError` from SQLite.
    func totalsMatchRows() throws(CacheStoreError) -> Bool {
        let s = try db.prepare("""
            SELECT coalesce((SELECT entries FROM totals WHERE id = 1), 0) = count(*)
               AND coalesce((SELECT bytes FROM totals WHERE id = 1), 0) = coalesce(sum(size), 0) FROM entries
            """)
        defer { s.reset() }
        guard try s.step() else { return false }
        return s.int64(0) != 0
    }

    /// Rewrites the totals row from the rows (inside a transaction of the caller).
    /// - Throws: `CacheStoreError` from SQLite.
    func recomputeTotals() throws(CacheStoreError) {
        try db.execute("""
            UPDATE totals SET entries = (SELECT count(*) FROM entries),
                bytes = (SELECT coalesce(sum(size), 0) FROM entries) WHERE id = 1
            """)
        if try hasPinnedTotalsTable() {
            try db.execute("""
                UPDATE pinned_totals SET entries = (SELECT count(*) FROM entries WHERE pinned <> 0),
                    bytes = (SELECT coalesce(sum(size), 0) FROM entries WHERE pinned <> 0) WHERE id = 1
                """)
        }
    }

    /// Creates the `pinned_totals` row and the triggers that keep it (call inside the set-up transaction):
    /// `(entries, bytes)` of the pinned rows, counted from the rows when the table is new (an index set up
    /// without it). The triggers live in the index, so every writer keeps the row exact, whatever its version.
    /// - Throws: `CacheStoreError` from SQLite.
    func createPinnedTotals() throws(CacheStoreError) {
        try db.execute("""
            CREATE TABLE IF NOT EXISTS pinned_totals(id INTEGER PRIMARY KEY CHECK (id = 1),
                entries INTEGER NOT NULL, bytes INTEGER NOT NULL);
            INSERT OR IGNORE INTO pinned_totals(id, entries, bytes) VALUES(1,
                (SELECT count(*) FROM entries WHERE pinned <> 0),
                (SELECT coalesce(sum(size), 0) FROM entries WHERE pinned <> 0));
            CREATE TRIGGER IF NOT EXISTS pinned_insert AFTER INSERT ON entries WHEN NEW.pinned <> 0 BEGIN
                UPDATE pinned_totals SET entries = entries + 1, bytes = bytes + NEW.size WHERE id = 1; END;
            CREATE TRIGGER IF NOT EXISTS pinned_delete AFTER DELETE ON entries WHEN OLD.pinned <> 0 BEGIN
                UPDATE pinned_totals SET entries = entries - 1, bytes = bytes - OLD.size WHERE id = 1; END;
            CREATE TRIGGER IF NOT EXISTS pinned_update AFTER UPDATE OF size, pinned ON entries
                WHEN OLD.pinned <> 0 OR NEW.pinned <> 0 BEGIN
                UPDATE pinned_totals SET
                    entries = entries - (OLD.pinned <> 0) + (NEW.pinned <> 0),
                    bytes = bytes - (CASE WHEN OLD.pinned <> 0 THEN OLD.size ELSE 0 END)
                        + (CASE WHEN NEW.pinned <> 0 THEN NEW.size ELSE 0 END)
                    WHERE id = 1; END;
            """)
    }

    /// Whether the `pinned_totals` table exists (an index set up by a version without it and opened read-only
    /// has none).
    /// - Throws: `CacheStoreError` from SQLite.
    private func hasPinnedTotalsTable() throws(CacheStoreError) -> Bool {
        if hasPinnedTotals { return true }
        let s = try db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'pinned_totals'")
        defer { s.reset() }
        hasPinnedTotals = try s.step() && s.int64(0) == 1
        return hasPinnedTotals
    }

    /// `(entries, bytes)` of the pinned rows: from `pinned_totals` (one row read), or counted from the rows when
    /// the index has no such table.
    /// - Throws: `CacheStoreError` from SQLite.
    func pinnedTotals() throws(CacheStoreError) -> (entries: Int, bytes: Int64) {
        let sql = try hasPinnedTotalsTable()
            ? "SELECT entries, bytes FROM pinned_totals WHERE id = 1"
            : "SELECT count(*), coalesce(sum(size), 0) FROM entries WHERE pinned <> 0"
        let s = try db.prepare(sql)
        defer { s.reset() }
        guard try s.step() else { return (0, 0) }
        return (Int(s.int64(0)), s.int64(1))
    }

    /// The size of `key`'s row when it is pinned, nil when the row is absent or unpinned.
    /// - Throws: `CacheStoreError` from SQLite.
    func pinnedSize(of key: StoreKey) throws(CacheStoreError) -> Int64? {
        let s = try db.prepare("SELECT size FROM entries WHERE primary_key = ? AND variant = ? AND pinned <> 0")
        s.bind(1, key.primary)
        s.bind(2, key.variant)
        defer { s.reset() }
        return try s.step() ? s.int64(0) : nil
    }

    /// The namespace's random secret (32 bytes, written once by `setUp`), or nil when the index has none (an index
    /// opened read-only whose `meta` table has no `key_secret` row) or it is not 64 hex digits.
    /// - Throws: `CacheStoreError` from SQLite.
    func keySecret() throws(CacheStoreError) -> [UInt8]? {
        let s = try db.prepare("SELECT value FROM meta WHERE name='key_secret'")
        defer { s.reset() }
        guard try s.step(), let text = s.string(0), text.utf8.count == 64 else { return nil }
        var bytes: [UInt8] = []
        var high: UInt8?
        for c in text.utf8 {
            let digit: UInt8
            switch c {
            case 0x30...0x39: digit = c - 0x30
            case 0x61...0x66: digit = c - 0x61 + 10
            default: return nil
            }
            if let h = high { bytes.append(h << 4 | digit); high = nil } else { high = digit }
        }
        return bytes
    }

    /// The hit and miss counts persisted by every store that used this index (zeros when the rows are missing,
    /// e.g. in an index opened read-only whose `meta` table has no counter rows).
    /// - Throws: `CacheStoreError` from SQLite.
    func persistedCounters() throws(CacheStoreError) -> CacheStoreStatistics.Counters {
        let s = try db.prepare("""
            SELECT name, CAST(value AS INTEGER) FROM meta
            WHERE name IN ('memory_hits', 'memory_misses', 'disk_hits', 'disk_misses')
            """)
        defer { s.reset() }
        var counters = CacheStoreStatistics.Counters()
        while try s.step() {
            let value = Int(s.int64(1))
            switch s.string(0) {
            case "memory_hits": counters.memoryHits = value
            case "memory_misses": counters.memoryMisses = value
            case "disk_hits": counters.diskHits = value
            case "disk_misses": counters.diskMisses = value
            default: break
            }
        }
        return counters
    }

    // MARK: Writing (call inside `db.transaction`)

    /// Adds `current - flushedCounters` (this process's counts not yet persisted) to the persisted counters, in
    /// one statement; the caller sets `flushedCounters = current` once the transaction committed.
    /// - Throws: `CacheStoreError` from SQLite.
    func flushCounters(upTo current: CacheStoreStatistics.Counters) throws(CacheStoreError) {
        let delta = current.subtracting(flushedCounters)
        guard delta != CacheStoreStatistics.Counters() else { return }
        let s = try db.prepare("""
            UPDATE meta SET value = CAST(value AS INTEGER) + CASE name WHEN 'memory_hits' THEN ?1
                WHEN 'memory_misses' THEN ?2 WHEN 'disk_hits' THEN ?3 ELSE ?4 END
            WHERE name IN ('memory_hits', 'memory_misses', 'disk_hits', 'disk_misses')
            """)
        s.bind(1, Int64(delta.memoryHits))
        s.bind(2, Int64(delta.memoryMisses))
        s.bind(3, Int64(delta.diskHits))
        s.bind(4, Int64(delta.diskMisses))
        defer { s.reset() }
        try s.step()
    }

    /// Adds access times the memory tier recorded (``MemoryTier/takeDirty()``) to the pending ones, keeping the
    /// later time of a key that has both (seconds since 1970).
    func addPendingTouches(_ touches: [(StoreKey, Double)]) {
        for (key, time) in touches { pendingTouches[key] = max(pendingTouches[key] ?? 0, time) }
    }

    /// Writes pending access times (call inside a transaction).
    /// - Throws: `CacheStoreError` from SQLite.
    func flushTouches() throws(CacheStoreError) {
        guard !pendingTouches.isEmpty else { return }
        let s = try db.prepare(
            "UPDATE entries SET accessed = max(accessed, ?) WHERE primary_key = ? AND variant = ?")
        for (key, time) in pendingTouches {
            s.reset()
            s.bind(1, time)
            s.bind(2, key.primary)
            s.bind(3, key.variant)
            try s.step()
        }
        pendingTouches.removeAll(keepingCapacity: true)
    }

    /// Inserts or replaces the row of `row.info.key`; returns the blob id the old row used, if any.
    ///
    /// Pins survive replacement: the row is pinned when `row` asks for it or when any stored variant of the same
    /// primary key is pinned (a new response for a pinned URL stays pinned).
    /// - Throws: `CacheStoreError` from SQLite.
    func upsert(_ row: IndexRow) throws(CacheStoreError) -> String? {
        let key = row.info.key
        let old = try db.prepare("SELECT blob_id FROM entries WHERE primary_key = ? AND variant = ?")
        old.bind(1, key.primary)
        old.bind(2, key.variant)
        let oldBlob = try old.step() ? old.string(0) : nil
        old.reset()
        let pin = try db.prepare("SELECT 1 FROM entries WHERE primary_key = ? AND pinned = 1 LIMIT 1")
        pin.bind(1, key.primary)
        let primaryPinned = try pin.step()
        pin.reset()
        let s = try db.prepare("""
            INSERT INTO entries(\(Self.columns), state) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, \(RowState.complete.rawValue))
            ON CONFLICT(primary_key, variant) DO UPDATE SET metadata = excluded.metadata, size = excluded.size,
                crc = excluded.crc, session = excluded.session, pinned = excluded.pinned, created = excluded.created,
                accessed = excluded.accessed, blob_id = excluded.blob_id, inline_body = excluded.inline_body,
                \(Self.isComplete)
            """)
        let info = row.info
        s.bind(1, key.primary)
        s.bind(2, key.variant)
        s.bind(3, info.metadata)
        s.bind(4, info.bodySize)
        s.bind(5, Int64(info.checksum))
        s.bind(6, Int64(info.storageClass == .session ? 1 : 0))
        s.bind(7, Int64(info.isPinned || primaryPinned ? 1 : 0))
        s.bind(8, info.createdAt.timeIntervalSince1970)
        s.bind(9, info.lastAccessedAt.timeIntervalSince1970)
        if let blob = row.blobID { s.bind(10, blob) } else { s.bindNull(10) }
        s.bind(11, row.inlineBody)
        try s.step()
        pendingTouches[key] = nil
        return oldBlob
    }

    /// Replaces the metadata of `key` and sets its access time (seconds since 1970); returns the rows changed
    /// (0 when `key` is not stored).
    /// - Throws: `CacheStoreError` from SQLite.
    func updateMetadata(_ metadata: Data, accessed: Double, for key: StoreKey) throws(CacheStoreError) -> Int {
        try run("UPDATE entries SET metadata = ?, accessed = ? WHERE primary_key = ? AND variant = ?") { s in
            s.bind(1, metadata)
            s.bind(2, accessed)
            s.bind(3, key.primary)
            s.bind(4, key.variant)
        }
    }

    /// Pins or unpins `key`; returns the rows changed (0 when `key` is not stored).
    /// - Throws: `CacheStoreError` from SQLite.
    func setPinned(_ pinned: Bool, key: StoreKey) throws(CacheStoreError) -> Int {
        try run("UPDATE entries SET pinned = ? WHERE primary_key = ? AND variant = ?") { s in
            s.bind(1, Int64(pinned ? 1 : 0))
            s.bind(2, key.primary)
            s.bind(3, key.variant)
        }
    }

    /// Pins or unpins every variant of `primary`; returns the rows changed (0 when none is stored).
    /// - Throws: `CacheStoreError` from SQLite.
    func setPinned(_ pinned: Bool, primary: String) throws(CacheStoreError) -> Int {
        try run("UPDATE entries SET pinned = ? WHERE primary_key = ?") { s in
            s.bind(1, Int64(pinned ? 1 : 0))
            s.bind(2, primary)
        }
    }

    /// Runs an UPDATE and returns how many rows it changed.
    private func run(_ sql: String, bind: (SQLiteStatement) -> Void) throws(CacheStoreError) -> Int {
        let s = try db.prepare(sql)
        bind(s)
        try s.step()
        s.reset()
        return db.changes
    }

    /// Deletes the row of `key`.
    /// - Throws: `CacheStoreError` from SQLite.
    func delete(_ key: StoreKey) throws(CacheStoreError) -> [RemovedRow] {
        try delete(where: "primary_key = ? AND variant = ?") { s in
            s.bind(1, key.primary)
            s.bind(2, key.variant)
        }
    }

    /// Deletes the row of `key` only while it still names the blob `blobID` (nil: an inline body), so a
    /// concurrent replacement is kept.
    /// - Throws: `CacheStoreError` from SQLite.
    func delete(_ key: StoreKey, ifBlobIs blobID: String?) throws(CacheStoreError) -> [RemovedRow] {
        try delete(where: "primary_key = ? AND variant = ? AND blob_id IS ?") { s in
            s.bind(1, key.primary)
            s.bind(2, key.variant)
            if let blobID { s.bind(3, blobID) } else { s.bindNull(3) }
        }
    }

    /// Deletes every variant of `primary`.
    /// - Throws: `CacheStoreError` from SQLite.
    func deleteVariants(of primary: String) throws(CacheStoreError) -> [RemovedRow] {
        try delete(where: "primary_key = ?") { $0.bind(1, primary) }
    }

    /// Deletes every row, pinned ones included.
    /// - Throws: `CacheStoreError` from SQLite.
    func deleteAll() throws(CacheStoreError) -> [RemovedRow] {
        try delete(where: "1")
    }

    /// Deletes every session row (``StorageClass/session``).
    /// - Throws: `CacheStoreError` from SQLite.
    func deleteSessionRows() throws(CacheStoreError) -> [RemovedRow] {
        try delete(where: "session = 1")
    }

    /// Deletes every unpinned row last accessed before `cutoff` (seconds since 1970).
    /// - Throws: `CacheStoreError` from SQLite.
    func deleteUnused(before cutoff: Double) throws(CacheStoreError) -> [RemovedRow] {
        try delete(where: "pinned = 0 AND accessed < ?") { $0.bind(1, cutoff) }
    }

    /// Whether ``deleteUnused(before:)`` would delete a row (read only).
    /// - Throws: `CacheStoreError` from SQLite.
    func hasUnused(before cutoff: Double) throws(CacheStoreError) -> Bool {
        let s = try db.prepare("SELECT 1 FROM entries WHERE pinned = 0 AND accessed < ? LIMIT 1")
        s.bind(1, cutoff)
        defer { s.reset() }
        return try s.step()
    }

    /// Deletes every row that is not ``RowState/complete``.
    /// - Throws: `CacheStoreError` from SQLite.
    func deleteIncomplete() throws(CacheStoreError) -> [RemovedRow] {
        try delete(where: "state <> \(RowState.complete.rawValue)")
    }

    /// Deletes the rows matching `condition`; returns their keys, blob ids and pins.
    private func delete(where condition: String,
                        bind: (SQLiteStatement) -> Void = { _ in }) throws(CacheStoreError) -> [RemovedRow] {
        let s = try db.prepare("DELETE FROM entries WHERE \(condition) RETURNING primary_key, variant, blob_id, pinned")
        bind(s)
        defer { s.reset() }
        var removed: [RemovedRow] = []
        while try s.step() {
            removed.append(RemovedRow(key: StoreKey(primary: s.string(0) ?? "", variant: s.string(1) ?? ""),
                                      blobID: s.string(2), pinned: s.int64(3) != 0))
        }
        for row in removed { pendingTouches[row.key] = nil }
        return removed
    }

    /// Every blob id the index names.
    /// - Throws: `CacheStoreError` from SQLite.
    func allBlobIDs() throws(CacheStoreError) -> Set<String> {
        let s = try db.prepare("SELECT blob_id FROM entries WHERE blob_id IS NOT NULL")
        defer { s.reset() }
        var ids = Set<String>()
        while try s.step() { if let id = s.string(0) { ids.insert(id) } }
        return ids
    }
}
