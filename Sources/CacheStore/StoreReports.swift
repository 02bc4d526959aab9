import Foundation

/// Counters and totals of one `CacheStore` (a snapshot).
///
/// `entries` and `diskBytes` come from the index (shared by every process using the namespace); memory figures and
/// hit/miss counters belong to this `CacheStore` instance only. Only `entry(for:)` counts hits and misses.
public struct CacheStoreStatistics: Sendable, Equatable {
    /// Number of entries (variants) in the index.
    public var entries: Int
    /// Bytes of bodies stored: blob files plus bodies kept inline in the index.
    public var diskBytes: Int64
    /// Bytes of bodies held by the memory tier.
    public var memoryBytes: Int
    /// Entries held by the memory tier.
    public var memoryEntries: Int
    /// `entry(for:)` calls answered from the memory tier.
    public var memoryHits: Int
    /// `entry(for:)` calls the memory tier could not answer (they went to disk).
    public var memoryMisses: Int
    /// `entry(for:)` calls answered from the disk tier.
    public var diskHits: Int
    /// `entry(for:)` calls that found nothing usable on disk (absent, unreadable or failed checksum).
    public var diskMisses: Int

    /// Creates a statistics value.
    public init(entries: Int = 0, diskBytes: Int64 = 0, memoryBytes: Int = 0, memoryEntries: Int = 0,
                memoryHits: Int = 0, memoryMisses: Int = 0, diskHits: Int = 0, diskMisses: Int = 0) {
        self.entries = entries
        self.diskBytes = diskBytes
        self.memoryBytes = memoryBytes
        self.memoryEntries = memoryEntries
        self.memoryHits = memoryHits
        self.memoryMisses = memoryMisses
        self.diskHits = diskHits
        self.diskMisses = diskMisses
    }
}

/// The result of `CacheStore.verify(repair:)`: what was checked, what was wrong, what was fixed.
public struct VerificationReport: Sendable {
    /// One problem found by `verify(repair:)`.
    public struct Problem: Sendable, Equatable {
        /// The entry concerned; nil for a file no entry names (an orphan) or a store-wide problem.
        public var key: StoreKey?
        /// `"checksum"`, `"missing-body"`, `"orphan-body"`, `"size"`, `"pending"` or `"accounting"`.
        public var kind: String
        /// Details: file name, expected and actual values.
        public var detail: String

        /// Creates a problem description.
        public init(key: StoreKey?, kind: String, detail: String) {
            self.key = key
            self.kind = kind
            self.detail = detail
        }
    }

    /// Number of entries whose body was read and checked.
    public var checked: Int
    /// Every problem found, in the order found.
    public var problems: [Problem]
    /// Number of problems fixed (rows deleted, orphan files removed, totals rewritten); 0 without `repair`.
    public var repaired: Int

    /// True when no problem was found.
    public var ok: Bool { problems.isEmpty }

    /// Creates a report.
    public init(checked: Int = 0, problems: [Problem] = [], repaired: Int = 0) {
        self.checked = checked
        self.problems = problems
        self.repaired = repaired
    }
}
