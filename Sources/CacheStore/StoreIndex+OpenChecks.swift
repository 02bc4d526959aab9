import Foundation
import CSQLite

/// Read-only checks that let a writable open skip write transactions it does not need: a process that answers
/// one request from the cache opens, reads and closes, and each `BEGIN IMMEDIATE` it skips is SQL parsed, a
/// write lock taken and a commit run for nothing.
extension StoreIndex {
    /// The tables, indexes and triggers ``setUp()`` creates (``schemaVersion`` 2).
    static let schemaObjectNames = [
        "meta", "entries", "entries_lru", "entries_session", "entries_pending", "totals",
        "entries_insert", "entries_delete", "entries_resize", "partials",
        "pinned_totals", "pinned_insert", "pinned_delete", "pinned_update",
    ]
    /// The `meta` rows ``setUp()`` inserts.
    static let metaRowNames = [
        "schema_version", "format", "memory_hits", "memory_misses", "disk_hits", "disk_misses", "key_secret",
    ]

    /// Whether the index already holds everything ``setUp()`` would create at ``schemaVersion``: every schema
    /// object, every `meta` row and the totals row. False when any is missing or the query fails (``setUp()``
    /// then runs its transaction, which creates what is missing).
    func isSetUpAtCurrentVersion() -> Bool {
        func quoted(_ names: [String]) -> String { names.map { "'\($0)'" }.joined(separator: ", ") }
        guard let s = try? db.prepare("""
            SELECT (SELECT count(*) FROM sqlite_master WHERE name IN (\(quoted(Self.schemaObjectNames)))),
                (SELECT count(*) FROM meta WHERE name IN (\(quoted(Self.metaRowNames)))),
                (SELECT count(*) FROM totals WHERE id = 1),
                (SELECT value FROM meta WHERE name = 'schema_version')
            """) else { return false }
        defer { s.reset() }
        guard (try? s.step()) == true else { return false }
        return s.int64(0) == Int64(Self.schemaObjectNames.count) && s.int64(1) == Int64(Self.metaRowNames.count)
            && s.int64(2) == 1 && s.string(3) == String(Self.schemaVersion)
    }

    /// Whether the open-time recovery has a row to delete: one not complete, a session row, or an unpinned row
    /// last accessed before `cutoff` (seconds since 1970). Each condition is answered by its own index.
    /// - Throws: `CacheStoreError` from SQLite.
    func hasRowsToRecover(unusedBefore cutoff: Double) throws(CacheStoreError) -> Bool {
        let s = try db.prepare("""
            SELECT EXISTS(SELECT 1 FROM entries WHERE state <> \(RowState.complete.rawValue))
                OR EXISTS(SELECT 1 FROM entries WHERE session = 1)
                OR EXISTS(SELECT 1 FROM entries WHERE pinned = 0 AND accessed < ?)
            """)
        s.bind(1, cutoff)
        defer { s.reset() }
        return try s.step() && s.int64(0) != 0
    }

    /// Whether the index holds any partial entry.
    /// - Throws: `CacheStoreError` from SQLite.
    func hasPartialRows() throws(CacheStoreError) -> Bool {
        guard try hasPartialsTable() else { return false }
        let s = try db.prepare("SELECT EXISTS(SELECT 1 FROM partials)")
        defer { s.reset() }
        return try s.step() && s.int64(0) != 0
    }
}
