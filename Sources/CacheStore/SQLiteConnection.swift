import Foundation
import CSQLite
import CacheSystem

/// SQLite's `SQLITE_TRANSIENT` (a C macro Swift does not import): tells SQLite to copy bound bytes.
let sqliteTransient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// One SQLite connection with a cache of prepared statements. Not thread-safe: the store serialises access.
final class SQLiteConnection {
    let handle: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]
    /// Nonzero while a held read transaction is open (``beginHeldRead()``): a new number for each one.
    private(set) var heldRead: UInt64 = 0
    private var heldReads: UInt64 = 0
    private var beginStatement: OpaquePointer?
    private var commitStatement: OpaquePointer?

    /// How a connection opens its file.
    enum Mode {
        /// Read and write, creating the file when missing.
        case readWrite
        /// Read only (`SQLITE_OPEN_READONLY`); needs a readable `-shm` file next to a WAL database, or the right
        /// to create one.
        case readOnly
        /// Read only with the `immutable=1` URI parameter: no locks, no `-shm`, and the `-wal` file is ignored —
        /// only correct when nobody can write the database and its WAL is empty.
        case immutable
    }

    /// The path prefix naming the directory descriptor SQLite reaches the database's files through
    /// (`cs_sqlite_hold_directory`), released once the connection is closed; nil when opened by path.
    private let heldDirectory: String?

    /// Opens the database `name` in the directory `directory` (a descriptor; creating the file only in
    /// `.readWrite` mode). SQLite reaches the database and every file it derives from its name (`-wal`, `-shm`,
    /// `-journal`, the directory it syncs) through a duplicate of that descriptor, never by a path, so the
    /// directory renamed away, replaced or swapped for a symbolic link after it was opened changes nothing for
    /// this connection. Only where the system calls of SQLite's VFS cannot be replaced is the file
    /// opened by `displayPath`, which also names it in error messages.
    /// - Throws: `CacheStoreError` mapped from the SQLite result code, or from the error number when the
    ///   descriptor cannot be held.
    init(directory: Int32, name: String, displayPath: String, busyTimeout: TimeInterval,
         mode: Mode = .readWrite) throws(CacheStoreError) {
        var prefix = [CChar](repeating: 0, count: 128)
        var held: String?
        switch cs_sqlite_hold_directory(directory, &prefix, prefix.count) {
        case 0: held = String(decoding: prefix.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        case -2: held = nil
        default: throw CacheStoreError.posix(cs_errno(), "open \(displayPath)")
        }
        let path = held.map { $0 + "/" + name } ?? displayPath
        var db: OpaquePointer?
        // NOFOLLOW: SQLite refuses an index that is a symbolic link (the store never follows one).
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
        var uri = path
        switch mode {
        case .readWrite: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .immutable:
            flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
            uri = "file:" + Self.uriEscaped(path) + "?immutable=1"
        }
        let rc = sqlite3_open_v2(uri, &db, flags, held == nil ? nil : cs_sqlite_vfs_name())
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            if let held { cs_sqlite_release_directory(held) }
            throw CacheStoreError.sqlite(rc, "open \(displayPath): \(message)")
        }
        handle = db
        heldDirectory = held
        setBusyTimeout(busyTimeout)
        sqlite3_extended_result_codes(db, 1)
    }

    /// Sets how many seconds a statement waits for another connection's lock (clamped to 0…3600; NaN → 10).
    func setBusyTimeout(_ seconds: TimeInterval) {
        let timeout = seconds.isFinite ? max(0, min(seconds, 3600)) : 10
        sqlite3_busy_timeout(handle, Int32(timeout * 1000))
    }

    /// Keeps the `-wal` and `-shm` files when the last connection closes (`SQLITE_FCNTL_PERSIST_WAL`), so a
    /// process that opens, reads and closes creates and deletes no file; with `PRAGMA journal_size_limit=0` the
    /// closing checkpoint truncates the WAL to 0 bytes. The data is the same either way: what matters to
    /// readers is the WAL's content, and an empty one holds nothing.
    func keepWriteAheadLogFiles() {
        var on: Int32 = 1
        _ = sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &on)
    }

    /// `path` percent-encoded for an SQLite `file:` URI (everything but unreserved characters and `/`).
    static func uriEscaped(_ path: String) -> String {
        var result = ""
        for byte in path.utf8 {
            let c = Character(Unicode.Scalar(byte))
            if (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || c == "/" || c == "-" || c == "_" || c == "." || c == "~" {
                result.append(c)
            } else {
                result += String(format: "%%%02X", byte)
            }
        }
        return result
    }

    deinit {
        endHeldRead()
        for (_, statement) in statements { sqlite3_finalize(statement) }
        // The held directory is released only once SQLite closed every file it derived from it; a connection
        // SQLite cannot close yet (an object not finalized) keeps it, and SQLite closes it later.
        if sqlite3_close(handle) == SQLITE_OK {
            if let heldDirectory { cs_sqlite_release_directory(heldDirectory) }
        } else {
            sqlite3_close_v2(handle)
        }
    }

    /// Opens a read transaction (`BEGIN`, deferred: its snapshot starts at the next read) that outlives the
    /// statements run in it, so a burst of point lookups pays for one WAL read lock instead of one each (those are
    /// `fcntl` calls on the database and `-shm` files, and SQLite's transaction set-up and tear-down). Nothing
    /// happens when a transaction is already open. Any other use of the connection — ``prepare(_:)``,
    /// ``execute(_:)``, ``transaction(_:)`` — ends it first, so a write never runs inside it and never sees its
    /// snapshot; the caller ends it when the snapshot may be stale (see `StoreIndex.row`) and soon after the burst.
    /// - Returns: the new ``heldRead`` number, or nil when none was opened.
    func beginHeldRead() -> UInt64? {
        guard heldRead == 0, sqlite3_get_autocommit(handle) != 0 else { return nil }
        guard let begin = cachedControl(&beginStatement, "BEGIN"), sqlite3_step(begin) == SQLITE_DONE else {
            if let beginStatement { sqlite3_reset(beginStatement) }
            return nil
        }
        sqlite3_reset(begin)
        heldReads &+= 1
        heldRead = heldReads
        return heldRead
    }

    /// Ends the held read transaction, if one is open (a read-only transaction: ending it writes nothing).
    func endHeldRead() {
        guard heldRead != 0 else { return }
        heldRead = 0
        guard sqlite3_get_autocommit(handle) == 0 else { return }
        if let commit = cachedControl(&commitStatement, "COMMIT"), sqlite3_step(commit) == SQLITE_DONE {
            sqlite3_reset(commit)
        } else {
            if let commitStatement { sqlite3_reset(commitStatement) }
            _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
        }
    }

    /// `slot`'s statement, preparing `sql` into it on first use (finalized with the connection).
    private func cachedControl(_ slot: inout OpaquePointer?, _ sql: String) -> OpaquePointer? {
        if let slot { return slot }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
              let statement else { return nil }
        statements["\u{0}held-read " + sql] = statement
        slot = statement
        return statement
    }

    /// The connection's last error message.
    var errorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// Runs one or more SQL statements without results.
    /// - Throws: `CacheStoreError` mapped from the SQLite result code.
    func execute(_ sql: String) throws(CacheStoreError) {
        if heldRead != 0 { endHeldRead() }
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw CacheStoreError.sqlite(rc, "\(sql.prefix(60)): \(errorMessage)") }
    }

    /// A prepared statement for `sql` (cached and reset, bindings cleared); ends a held read transaction first.
    /// - Throws: `CacheStoreError` when the SQL cannot be prepared.
    func prepare(_ sql: String) throws(CacheStoreError) -> SQLiteStatement {
        if heldRead != 0 { endHeldRead() }
        if let cached = statements[sql] {
            sqlite3_reset(cached)
            sqlite3_clear_bindings(cached)
            return SQLiteStatement(handle: cached, connection: self)
        }
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw CacheStoreError.sqlite(rc, "prepare \(sql.prefix(60)): \(errorMessage)")
        }
        statements[sql] = statement
        return SQLiteStatement(handle: statement, connection: self)
    }

    /// Runs the one statement `sql` (no result rows: `BEGIN`, `COMMIT`, `SAVEPOINT`…) through its cached prepared
    /// statement, so it is parsed once per connection rather than on every call as by ``execute(_:)``.
    /// - Throws: `CacheStoreError` from prepare or step.
    func run(_ sql: String) throws(CacheStoreError) {
        let statement = try prepare(sql)
        defer { statement.reset() }
        try statement.step()
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back when it throws.
    /// - Throws: `body`'s error or the commit's `CacheStoreError`.
    func transaction<T>(_ body: () throws(CacheStoreError) -> T) throws(CacheStoreError) -> T {
        try run("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try run("COMMIT")
            return value
        } catch {
            _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
            throw error
        }
    }

    /// Runs `body` inside `SAVEPOINT … RELEASE` within the caller's transaction; when it throws, only its changes
    /// are rolled back and the transaction goes on.
    /// - Throws: `body`'s error or the savepoint's `CacheStoreError`.
    func savepoint<T>(_ body: () throws(CacheStoreError) -> T) throws(CacheStoreError) -> T {
        try run("SAVEPOINT row")
        do {
            let value = try body()
            try run("RELEASE row")
            return value
        } catch {
            _ = sqlite3_exec(handle, "ROLLBACK TO row; RELEASE row", nil, nil, nil)
            throw error
        }
    }

    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// Whether a transaction is open. SQLite rolls back the whole transaction by itself after some errors
    /// (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM…), even inside a savepoint; a caller batching rows checks this
    /// after a failed row, since later statements would otherwise run, and commit, on their own.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }
}

/// A prepared statement borrowed from a `SQLiteConnection`; valid until the next `prepare` of the same SQL.
struct SQLiteStatement {
    let handle: OpaquePointer
    unowned let connection: SQLiteConnection

    func bind(_ index: Int32, _ value: String) {
        sqlite3_bind_text(handle, index, value, -1, sqliteTransient)
    }

    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(handle, index, value)
    }

    func bind(_ index: Int32, _ value: Double) {
        sqlite3_bind_double(handle, index, value)
    }

    func bind(_ index: Int32, _ value: Data?) {
        guard let value else {
            sqlite3_bind_null(handle, index)
            return
        }
        _ = value.withUnsafeBytes { raw in
            // A zero-length blob still needs a non-NULL pointer to be stored as a blob rather than NULL.
            if raw.count == 0 {
                sqlite3_bind_zeroblob(handle, index, 0)
            } else {
                sqlite3_bind_blob(handle, index, raw.baseAddress, Int32(raw.count), sqliteTransient)
            }
        }
    }

    func bindNull(_ index: Int32) {
        sqlite3_bind_null(handle, index)
    }

    /// Advances; true when a row is available.
    /// - Throws: `CacheStoreError` mapped from the result code.
    @discardableResult
    func step() throws(CacheStoreError) -> Bool {
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let error = CacheStoreError.sqlite(rc, "step: \(connection.errorMessage)")
        sqlite3_reset(handle)
        throw error
    }

    /// Releases the statement's read lock early (call after the last needed row).
    func reset() {
        sqlite3_reset(handle)
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func string(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        return String(cString: text)
    }

    func data(_ column: Int32) -> Data? {
        if isNull(column) { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return Data() }
        return Data(bytes: pointer, count: count)
    }
}
