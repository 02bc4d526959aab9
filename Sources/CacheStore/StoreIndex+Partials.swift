import Foundation
import CSQLite

/// One row of the `partials` table: the first bytes of a body whose transfer did not finish.
struct PartialRow {
    var key: StoreKey
    var metadata: Data
    /// The body file's name in `tmp/`.
    var file: String
    /// Bytes counted in `crc`: the verified prefix of the file.
    var verified: Int64
    var crc: UInt32
    /// The session marker of the store whose transfer is writing the file; nil when none is.
    var owner: String?
    var created: Double
    var accessed: Double
}

/// The SQL of partial entries (schema version 2). A partial is not an entry: lookups, totals and `ls` of
/// complete entries never see it; its bytes count against `maxDiskBytes` through ``partialBytes()``.
extension StoreIndex {
    /// Creates the `partials` table when missing (call inside the set-up transaction).
    /// - Throws: `CacheStoreError` from SQLite.
    func createPartialsTable() throws(CacheStoreError) {
        try db.execute("""
            CREATE TABLE IF NOT EXISTS partials(
                primary_key TEXT NOT NULL, variant TEXT NOT NULL,
                metadata BLOB NOT NULL, file TEXT NOT NULL UNIQUE,
                verified INTEGER NOT NULL, crc INTEGER NOT NULL, owner TEXT,
                created REAL NOT NULL, accessed REAL NOT NULL,
                UNIQUE(primary_key, variant));
            """)
    }

    /// Records schema version `version` (after a migration, inside a transaction).
    /// - Throws: `CacheStoreError` from SQLite.
    func setSchemaVersion(_ version: Int) throws(CacheStoreError) {
        try db.execute("UPDATE meta SET value = '\(version)' WHERE name = 'schema_version'")
    }

    private static let partialColumns = "primary_key, variant, metadata, file, verified, crc, owner, created, accessed"

    private func decodePartial(_ s: SQLiteStatement) -> PartialRow {
        PartialRow(key: StoreKey(primary: s.string(0) ?? "", variant: s.string(1) ?? ""), metadata: s.data(2) ?? Data(),
                   file: s.string(3) ?? "", verified: s.int64(4), crc: UInt32(truncatingIfNeeded: s.int64(5)),
                   owner: s.string(6), created: s.double(7), accessed: s.double(8))
    }

    /// The partials matching `condition`, in `order`; `[]` when the table does not exist (a version-1 index
    /// opened read-only).
    private func partialRows(where condition: String, order: String = "accessed",
                             bind: (SQLiteStatement) -> Void = { _ in }) throws(CacheStoreError) -> [PartialRow] {
        guard try hasPartialsTable() else { return [] }
        let s = try db.prepare("SELECT \(Self.partialColumns) FROM partials WHERE \(condition) ORDER BY \(order)")
        bind(s)
        defer { s.reset() }
        var rows: [PartialRow] = []
        while try s.step() { rows.append(decodePartial(s)) }
        return rows
    }

    /// Whether the index has the `partials` table (schema version 2).
    func hasPartialsTable() throws(CacheStoreError) -> Bool {
        if hasPartials { return true }
        let s = try db.prepare("SELECT 1 FROM sqlite_master WHERE type='table' AND name='partials'")
        defer { s.reset() }
        hasPartials = try s.step()
        return hasPartials
    }

    /// The partial of `key`, or nil.
    /// - Throws: `CacheStoreError` from SQLite.
    func partial(for key: StoreKey) throws(CacheStoreError) -> PartialRow? {
        try partialRows(where: "primary_key = ? AND variant = ?") { s in
            s.bind(1, key.primary)
            s.bind(2, key.variant)
        }.first
    }

    /// The partial whose body file is `file`, or nil.
    /// - Throws: `CacheStoreError` from SQLite.
    func partialNamed(_ file: String) throws(CacheStoreError) -> PartialRow? {
        try partialRows(where: "file = ?") { $0.bind(1, file) }.first
    }

    /// Every partial of `primary`, ordered by variant.
    /// - Throws: `CacheStoreError` from SQLite.
    func partials(of primary: String) throws(CacheStoreError) -> [PartialRow] {
        try partialRows(where: "primary_key = ?", order: "variant") { $0.bind(1, primary) }
    }

    /// Every partial, least recently accessed first (the eviction order).
    /// - Throws: `CacheStoreError` from SQLite.
    func allPartials() throws(CacheStoreError) -> [PartialRow] {
        try partialRows(where: "1", order: "accessed, file")
    }

    /// The verified bytes of every partial together.
    /// - Throws: `CacheStoreError` from SQLite.
    func partialBytes() throws(CacheStoreError) -> Int64 {
        guard try hasPartialsTable() else { return 0 }
        let s = try db.prepare("SELECT coalesce(sum(verified), 0) FROM partials")
        defer { s.reset() }
        return try s.step() ? s.int64(0) : 0
    }

    /// Inserts or replaces the partial of `row.key`; returns the file the replaced row named, if another.
    /// - Throws: `CacheStoreError` from SQLite.
    func upsertPartial(_ row: PartialRow) throws(CacheStoreError) -> String? {
        let old = try partial(for: row.key)
        let s = try db.prepare("""
            INSERT INTO partials(\(Self.partialColumns)) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(primary_key, variant) DO UPDATE SET metadata = excluded.metadata, file = excluded.file,
                verified = excluded.verified, crc = excluded.crc, owner = excluded.owner,
                created = excluded.created, accessed = excluded.accessed
            """)
        s.bind(1, row.key.primary)
        s.bind(2, row.key.variant)
        s.bind(3, row.metadata)
        s.bind(4, row.file)
        s.bind(5, row.verified)
        s.bind(6, Int64(row.crc))
        if let owner = row.owner { s.bind(7, owner) } else { s.bindNull(7) }
        s.bind(8, row.created)
        s.bind(9, row.accessed)
        defer { s.reset() }
        try s.step()
        return old.map(\.file).flatMap { $0 == row.file ? nil : $0 }
    }

    /// Sets the verified count and checksum (and owner) of the partial whose body file is `file`; returns the
    /// rows changed (0 when it was removed meanwhile, e.g. evicted).
    /// - Throws: `CacheStoreError` from SQLite.
    func updatePartial(file: String, verified: Int64, crc: UInt32, owner: String?,
                       accessed: Double) throws(CacheStoreError) -> Int {
        let s = try db.prepare("UPDATE partials SET verified = ?, crc = ?, owner = ?, accessed = ? WHERE file = ?")
        s.bind(1, verified)
        s.bind(2, Int64(crc))
        if let owner { s.bind(3, owner) } else { s.bindNull(3) }
        s.bind(4, accessed)
        s.bind(5, file)
        defer { s.reset() }
        try s.step()
        return db.changes
    }

    /// Makes the partial whose file is `file` owned by `owner` when it is not owned by a live store (its owner is
    /// nil or not in `liveOwners`); returns whether it was claimed.
    /// - Throws: `CacheStoreError` from SQLite.
    func claimPartial(file: String, owner: String, liveOwners: Set<String>) throws(CacheStoreError) -> Bool {
        guard let row = try partialNamed(file) else { return false }
        if let current = row.owner, liveOwners.contains(current) { return false }
        return try updatePartial(file: file, verified: row.verified, crc: row.crc, owner: owner,
                                 accessed: row.accessed) > 0
    }

    /// Deletes the partial of `key`; returns its file name, if there was one.
    /// - Throws: `CacheStoreError` from SQLite.
    @discardableResult
    func deletePartial(_ key: StoreKey) throws(CacheStoreError) -> String? {
        guard try hasPartialsTable() else { return nil }
        let s = try db.prepare("DELETE FROM partials WHERE primary_key = ? AND variant = ? RETURNING file")
        s.bind(1, key.primary)
        s.bind(2, key.variant)
        defer { s.reset() }
        return try s.step() ? s.string(0) : nil
    }

    /// Deletes the partial whose body file is `file` (whatever its key); returns whether one was deleted.
    /// - Throws: `CacheStoreError` from SQLite.
    @discardableResult
    func deletePartial(file: String) throws(CacheStoreError) -> Bool {
        guard try hasPartialsTable() else { return false }
        let s = try db.prepare("DELETE FROM partials WHERE file = ?")
        s.bind(1, file)
        defer { s.reset() }
        try s.step()
        return db.changes > 0
    }

    /// Deletes every partial of `primary` (or every partial when nil); returns the files of those no transfer
    /// is writing (a written file is its transfer's to delete).
    /// - Throws: `CacheStoreError` from SQLite.
    func deletePartials(of primary: String?) throws(CacheStoreError) -> [String] {
        try deletePartials(where: primary == nil ? "1" : "primary_key = ?") { s in if let primary { s.bind(1, primary) } }
    }

    /// Deletes the idle partials last used before `cutoff` (seconds since 1970); returns their files.
    /// - Throws: `CacheStoreError` from SQLite.
    func deleteUnusedPartials(before cutoff: Double) throws(CacheStoreError) -> [String] {
        try deletePartials(where: "owner IS NULL AND accessed < ?") { $0.bind(1, cutoff) }
    }

    /// Whether ``deleteUnusedPartials(before:)`` would delete a row (read only).
    /// - Throws: `CacheStoreError` from SQLite.
    func hasUnusedPartials(before cutoff: Double) throws(CacheStoreError) -> Bool {
        guard try hasPartialsTable() else { return false }
        let s = try db.prepare("SELECT 1 FROM partials WHERE owner IS NULL AND accessed < ? LIMIT 1")
        s.bind(1, cutoff)
        defer { s.reset() }
        return try s.step()
    }

    private func deletePartials(where condition: String,
                                bind: (SQLiteStatement) -> Void) throws(CacheStoreError) -> [String] {
        guard try hasPartialsTable() else { return [] }
        let s = try db.prepare("DELETE FROM partials WHERE \(condition) RETURNING file, owner")
        bind(s)
        defer { s.reset() }
        var files: [String] = []
        while try s.step() { if s.isNull(1), let file = s.string(0) { files.append(file) } }
        return files
    }

    /// Clears every owner (recovery: no store has the namespace open, so no transfer is writing).
    /// - Throws: `CacheStoreError` from SQLite.
    func releaseAllPartials() throws(CacheStoreError) {
        guard try hasPartialsTable() else { return }
        try db.execute("UPDATE partials SET owner = NULL WHERE owner IS NOT NULL")
    }
}
