import Foundation
import CacheSystem
import Synchronization

/// Counters and totals of one `CacheStore` (a snapshot).
///
/// `entries` and `diskBytes` come from the index (shared by every process using the namespace); memory figures
/// belong to this `CacheStore` instance. The hit and miss counters are lifetime totals: everything counted
/// since the cache was created (for an index whose `meta` table had no counter rows: since a writable store first
/// added them) by every process that used it. Each store adds its counts to the index in its write
/// transactions, at most every 30 seconds on a disk read, and in `close()` (also run by `deinit` and at `exit()`),
/// so the totals include this instance's counts at once and other live processes' counts up to their last
/// flush; a process that is killed loses its unflushed counts. `sinceOpen` has this instance's counts alone.
/// Hits and misses are counted by `entry(for:)` (memory and disk tier), by `verifiedBodyFileURL(for:matching:)` and
/// `openVerifiedBody(for:matching:)` (disk tier), and by `recordLookup(hit:)` for a lookup a caller resolved
/// itself; `peekEntry(for:)`, `variants(forPrimaryKey:)` and `bodyFileURL(for:)` count nothing.
public struct CacheStoreStatistics: Sendable, Equatable {
    /// Hit and miss counts of lookups (see above), by tier.
    public struct Counters: Sendable, Equatable {
        /// `entry(for:)` calls answered from the memory tier.
        public var memoryHits: Int
        /// `entry(for:)` calls the memory tier could not answer (they went to disk).
        public var memoryMisses: Int
        /// Lookups answered from the disk tier.
        public var diskHits: Int
        /// Lookups that found nothing usable on disk (absent, unreadable or failed checksum).
        public var diskMisses: Int

        /// Creates a set of counts (all zero by default).
        public init(memoryHits: Int = 0, memoryMisses: Int = 0, diskHits: Int = 0, diskMisses: Int = 0) {
            self.memoryHits = memoryHits
            self.memoryMisses = memoryMisses
            self.diskHits = diskHits
            self.diskMisses = diskMisses
        }

        /// Field-by-field sum (wrapping, never trapping).
        func adding(_ other: Counters) -> Counters {
            Counters(memoryHits: memoryHits &+ other.memoryHits, memoryMisses: memoryMisses &+ other.memoryMisses,
                     diskHits: diskHits &+ other.diskHits, diskMisses: diskMisses &+ other.diskMisses)
        }

        /// Field-by-field difference (wrapping, never trapping).
        func subtracting(_ other: Counters) -> Counters {
            Counters(memoryHits: memoryHits &- other.memoryHits, memoryMisses: memoryMisses &- other.memoryMisses,
                     diskHits: diskHits &- other.diskHits, diskMisses: diskMisses &- other.diskMisses)
        }
    }

    /// Number of entries (variants) in the index.
    public var entries: Int
    /// Bytes of bodies stored: blob files plus bodies kept inline in the index.
    public var diskBytes: Int64
    /// Bytes of bodies held by this instance's memory tier.
    public var memoryBytes: Int
    /// Entries held by this instance's memory tier.
    public var memoryEntries: Int
    /// `entry(for:)` calls answered from a memory tier since the cache was created (all processes).
    public var memoryHits: Int
    /// `entry(for:)` calls a memory tier could not answer since the cache was created (all processes).
    public var memoryMisses: Int
    /// `entry(for:)` calls answered from the disk tier since the cache was created (all processes).
    public var diskHits: Int
    /// `entry(for:)` calls that found nothing usable on disk since the cache was created (all processes).
    public var diskMisses: Int
    /// The same four counts for this `CacheStore` instance alone, since it was opened.
    public var sinceOpen: Counters

    /// Creates a statistics value.
    public init(entries: Int = 0, diskBytes: Int64 = 0, memoryBytes: Int = 0, memoryEntries: Int = 0,
                memoryHits: Int = 0, memoryMisses: Int = 0, diskHits: Int = 0, diskMisses: Int = 0,
                sinceOpen: Counters = Counters()) {
        self.entries = entries
        self.diskBytes = diskBytes
        self.memoryBytes = memoryBytes
        self.memoryEntries = memoryEntries
        self.memoryHits = memoryHits
        self.memoryMisses = memoryMisses
        self.diskHits = diskHits
        self.diskMisses = diskMisses
        self.sinceOpen = sinceOpen
    }
}

/// The result of `CacheStore.verify(repair:)`: what was checked, what was wrong, what was fixed.
public struct VerificationReport: Sendable {
    /// One problem found by `verify(repair:)`.
    public struct Problem: Sendable, Equatable {
        /// The entry concerned; nil for a file no entry names (an orphan) or a store-wide problem.
        public var key: StoreKey?
        /// `"checksum"`, `"missing-body"`, `"orphan-body"`, `"size"`, `"pending"`, `"accounting"`, `"index"` or
        /// `"read-only"` (repair impossible: the store was opened read-only).
        public var kind: String
        /// Details: file name, expected and actual values; for a problem left alone on purpose, why.
        public var detail: String
        /// True when `verify(repair: true)` deliberately left this problem alone because fixing it could harm a
        /// live process (an orphan body younger than 60 seconds while another store has the namespace open: it
        /// may be a write being committed). Such a problem is not a failure of the repair; a later repair, once
        /// the file is older or the other store closed, removes it.
        public var isKept: Bool

        /// Creates a problem description.
        public init(key: StoreKey?, kind: String, detail: String, isKept: Bool = false) {
            self.key = key
            self.kind = kind
            self.detail = detail
            self.isKept = isKept
        }
    }

    /// Number of entries whose body was read and checked.
    public var checked: Int
    /// Number of partial downloads (kept to resume) whose verified prefix was read and checked.
    public var checkedPartials = 0
    /// Every problem found, in the order found (kept ones included, marked `isKept`).
    public var problems: [Problem]
    /// Number of problems fixed (rows deleted, orphan files or directories removed, totals rewritten); 0 without
    /// `repair`.
    public var repaired: Int

    /// True when no problem was found.
    public var ok: Bool { problems.isEmpty }

    /// Number of problems deliberately left alone by a repair (see `Problem.isKept`).
    public var kept: Int { problems.lazy.filter(\.isKept).count }

    /// Number of problems that are neither repaired nor deliberately kept: after `verify(repair: true)`, 0 means
    /// the repair did everything it safely could (a command-line tool should exit 0), more means it failed.
    public var unresolved: Int { max(0, problems.count - repaired - kept) }

    /// Creates a report.
    public init(checked: Int = 0, problems: [Problem] = [], repaired: Int = 0) {
        self.checked = checked
        self.problems = problems
        self.repaired = repaired
    }
}

/// A stored body file held open for reading (``CacheStore/openVerifiedBody(for:matching:)``): its bytes stay
/// readable after the entry is replaced, evicted or purged. Reads name their offset (`pread`), so several readers
/// may share one value; the file is closed when the value is released. Thread-safe.
public final class OpenedBody: Sendable {
    /// Where the blob file was when it was opened (informational: it may be gone by now).
    public let url: URL
    /// The body's size in bytes.
    public let size: Int64
    private let fd: Int32

    init(fd: Int32, url: URL, size: Int64) {
        self.fd = fd
        self.url = url
        self.size = size
    }

    deinit {
        _ = cs_close(fd)
    }

    /// Runs `body` with the open descriptor (read-only; valid until `body` returns; never close it), for a
    /// caller that copies the bytes in the kernel (`copy_file_range`, `sendfile`) instead of reading them.
    public func withDescriptor<T, E: Error>(_ body: (Int32) throws(E) -> T) throws(E) -> T {
        defer { withExtendedLifetime(self) {} }
        return try body(fd)
    }

    /// At most `count` bytes of the body from byte `offset` on (empty at or past the end).
    /// - Throws: `CacheStoreError.Code.io` when the file cannot be read or ends before `size` bytes.
    public func read(from offset: Int64, upToCount count: Int) throws(CacheStoreError) -> Data {
        let wanted = Int(max(0, min(Int64(max(0, count)), size - max(0, offset))))
        guard wanted > 0 else { return Data() }
        var data = Data(count: wanted)
        let n = data.withUnsafeMutableBytes { raw -> Int64 in
            guard let base = raw.baseAddress else { return 0 }
            return cs_read_at(fd, base, wanted, offset)
        }
        if n < 0 { throw CacheStoreError.posix(cs_errno(), "read \(url.path)") }
        if n == 0 { throw CacheStoreError(.io, "read \(url.path): the file ended at \(offset) of \(size) bytes") }
        return n == Int64(wanted) ? data : Data(data.prefix(Int(n)))
    }
}
