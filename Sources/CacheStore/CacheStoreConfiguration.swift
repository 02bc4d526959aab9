import Foundation

extension CacheStore {
    /// What a write survives once the store has acknowledged it (returned from `store` or `commit`).
    ///
    /// Either way no wrong byte is ever served: every blob file's size and crc32 are checked before a process
    /// serves it for the first time (a new process — every process after a reboot — checks every body again), so
    /// a body torn or zeroed by a power cut is dropped and is a miss. The index is SQLite in WAL mode with
    /// `synchronous=NORMAL` in both modes (a power cut may lose the last commits; it never corrupts the index).
    public enum Durability: Sendable, Hashable {
        /// Survives the process being killed (the kernel's page cache holds every written byte); after a power
        /// cut or an operating-system crash an entry written shortly before may be lost (its body fails its
        /// checksum and is dropped). No fsync per entry: a blob write costs about what writing the file costs.
        case processCrash
        /// Also survives a power cut: each blob file is fsynced (`F_FULLFSYNC` on Apple platforms) and `blobs/`
        /// flushed before its index row commits — two syncs per file-backed entry (≈10 ms each on a typical disk).
        case powerLoss
    }

    /// Where a store lives and the limits it enforces. Defaults: one week of age, 1 GiB of disk.
    public struct Configuration: Sendable {
        /// The cache root; the store lives in `<directory>/<namespace>/`.
        public var directory: URL
        /// The namespace (one directory, created with mode 0700): 1–64 characters of `[A-Za-z0-9._-]`,
        /// not `.` or `..`. Default `"default"`.
        public var namespace: String
        /// Maximum bytes of bodies on disk (blob files + inline bodies); nil = unlimited. Default 1 GiB.
        public var maxDiskBytes: Int64?
        /// Maximum bytes of bodies held in memory; default 32 MiB; 0 disables the memory tier.
        public var maxMemoryBytes: Int
        /// Maximum number of entries held in memory; default 2,000; 0 disables the memory tier.
        public var maxMemoryEntries: Int
        /// Maximum number of entries on disk; nil = unlimited (the default).
        public var maxEntryCount: Int?
        /// Maximum bytes of one body; a larger one is refused (`CacheStoreError.Code.entryTooLarge`) before anything
        /// is written or evicted. `nil` (the default) = no limit of its own (see ``entryByteLimit``).
        public var maxEntryBytes: Int64?
        /// Maximum seconds since an entry's last access before `trim()` deletes it; default 7 days; nil = no limit.
        public var maxAge: TimeInterval?
        /// Bodies of up to this many bytes are stored inside the SQLite index instead of a blob file.
        /// Default 8 KiB (measured crossover, see the store benchmark); 0 stores every body in a file.
        public var inlineThreshold: Int
        /// Bodies larger than this many bytes are never put into the memory tier; default 1 MiB.
        public var maxMemoryEntryBytes: Int
        /// Seconds a write waits for another process holding the index locked; default 10.
        public var busyTimeout: TimeInterval
        /// Receives one line per notable event (index moved aside, recovery deletions, failed reads).
        /// Default: writes `CacheStore: <message>` to standard error. Set to `{ _ in }` to silence.
        public var logger: @Sendable (String) -> Void
        /// The clock used for creation and access times (tests inject a fixed one). Default `Date.init`; with the
        /// default clock a memory-tier hit reads the kernel's coarse real-time clock (a few milliseconds of
        /// resolution, ≈4× cheaper) for the access time it records.
        public var now: @Sendable () -> Date {
            get { customNow ?? Self.systemClock }
            set { customNow = newValue }
        }
        /// The clock set through `now`; nil: the system clock.
        var customNow: (@Sendable () -> Date)?
        static let systemClock: @Sendable () -> Date = { Date() }

        /// The current time from the configured clock (no closure is built for the system clock).
        @inline(__always)
        func currentTime() -> Date {
            if let customNow { return customNow() }
            return Date()
        }

        /// Opens the store read-only even when it could be written. Reads work (`entry(for:)`, `info(for:)`,
        /// `bodyFileURL(for:)`, `allEntries()`, `verify(repair: false)`); every write throws
        /// `CacheStoreError.Code.permissionDenied`; nothing under the namespace directory is changed (no recovery,
        /// no session marker, no access times or counters written) — except that SQLite creates its empty WAL
        /// coordination files (`index.sqlite-wal`, `-shm`) when they are missing and the directory allows it, so the
        /// store can read while another process writes. Without this flag a store whose
        /// directory exists but cannot be written (permissions, a read-only mount) opens read-only by itself; see
        /// `CacheStore.isReadOnly`. Default false.
        public var readOnly: Bool = false

        /// The store is opened to remove entries (a purge, an `rm`): the rule that opens read-only when fewer than
        /// `CacheStore.minimumAvailableBytes` are available on its file system does not apply, because deleting is
        /// how a cache that filled its disk gets space back. An open whose writes then fail still opens read-only.
        /// Default false.
        public var opensToFreeSpace: Bool = false

        /// What an acknowledged write survives. Default ``Durability/processCrash``.
        public var durability: Durability = .processCrash

        /// The data-protection class given to the namespace directory and its subdirectories on Apple's
        /// data-protection platforms (files created there inherit it); `nil` = keep what they inherit from the
        /// app's container. No effect on macOS or Linux. Default ``FileProtection/completeUntilFirstUserAuthentication``:
        /// a locked device can still refresh in the background.
        public var fileProtection: FileProtection? = .completeUntilFirstUserAuthentication

        /// Whether the namespace directory is marked excluded from backups on Apple platforms
        /// (`URLResourceValues.isExcludedFromBackup`): a cache can be fetched again, so it should not use the
        /// user's backup space. No effect on Linux. Default true.
        public var excludedFromBackup: Bool = true

        /// Test hook: called with the name of each write step (`"tmp-written"` — the body file written, in `tmp/`
        /// or, for a body stored from memory, in `blobs/` —, `"tmp-synced"`, `"blob-renamed"` — the file in
        /// `blobs/`, its row not committed —, `"batch-row"` — inside the group commit's transaction, before the
        /// row —, `"index-committed"`, `"old-blob-removed"`); throwing from it fails the write at that step. Opening
        /// calls it with `"index-opening"` and `"index-opened"` around SQLite's open of the index.
        var faultInjection: (@Sendable (String) throws(CacheStoreError) -> Void)?
        /// Test hook: when true, a write failed by `faultInjection` does not clean up after itself, like a process
        /// that died at that step.
        var faultSkipsCleanup: Bool = false

        /// The per-entry limit in force, in bytes: `maxEntryBytes`, never more than `maxDiskBytes` (a body larger
        /// than the whole store is never stored); `nil` = unlimited (both unset).
        public var entryByteLimit: Int64? {
            guard let explicit = maxEntryBytes else { return maxDiskBytes.map { max(0, $0) } }
            return maxDiskBytes.map { min(max(0, explicit), max(0, $0)) } ?? max(0, explicit)
        }

        /// The most bytes one partial entry (an interrupted transfer kept to be resumed) may hold: `maxDiskBytes`;
        /// `nil` = unlimited. Not the per-entry limit: a body over it is delivered without being stored, and its
        /// partial is what lets an interrupted download of it go on where it stopped instead of from byte 0. The
        /// partial counts against `maxDiskBytes` like everything else and is evicted before any complete entry.
        public var partialByteLimit: Int64? { maxDiskBytes.map { max(0, $0) } }

        /// Creates a configuration with the default limits for `<directory>/<namespace>/`.
        public init(directory: URL, namespace: String = "default") {
            self.directory = directory
            self.namespace = namespace
            self.maxDiskBytes = 1 << 30
            self.maxMemoryBytes = 32 << 20
            self.maxMemoryEntries = 2_000
            self.maxEntryCount = nil
            self.maxAge = 7 * 24 * 3600
            self.inlineThreshold = 8 << 10
            self.maxMemoryEntryBytes = 1 << 20
            self.busyTimeout = 10
            self.logger = { message in
                FileHandle.standardError.write(Data("CacheStore: \(message)\n".utf8))
            }
        }
    }
}
