import Foundation

/// The key of one stored entry: a primary key plus a variant (secondary key), both opaque to the store.
///
/// The HTTP layer uses method + target URI as `primary` and the values of the request headers named by `Vary`
/// as `variant` (RFC 9111 §4.1); the store only compares them byte for byte.
public struct StoreKey: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The primary key (e.g. `"GET https://example.com/a"`).
    public var primary: String
    /// The variant of the primary key; `""` when the primary key has only one variant.
    public var variant: String

    /// Creates a key; `variant` defaults to the empty string (the only variant).
    public init(primary: String, variant: String = "") {
        self.primary = primary
        self.variant = variant
    }

    /// Hashes the primary key and the variant's length only (equal keys still hash equally): the memory tier
    /// hashes a key on every hit, and hashing one string instead of two is measurably cheaper.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(primary)
        hasher.combine(variant.utf8.count)
    }

    /// `primary` or `primary [variant]`.
    public var description: String { variant.isEmpty ? primary : "\(primary) [\(variant)]" }
}

/// How long an entry lives: across launches, or only until the store is next opened (ASIHTTPRequest's
/// `ASICacheForSessionDurationCacheStoragePolicy` vs `ASICachePermanentlyCacheStoragePolicy`).
public enum StorageClass: String, Sendable, Codable, CaseIterable {
    /// Kept until evicted by a limit, by age, or removed.
    case permanent
    /// Deleted at the next open of the store and by `CacheStore.clearSession()`.
    case session
}

/// What the index knows about one stored entry (no body bytes).
public struct EntryInfo: Sendable, Hashable {
    /// The entry's key.
    public var key: StoreKey
    /// The caller's metadata bytes (the HTTP layer stores the response head here), returned unchanged.
    public var metadata: Data
    /// Size of the body in bytes.
    public var bodySize: Int64
    /// zlib crc32 of the body, checked when the body is read.
    public var checksum: UInt32
    /// Permanent or session-only.
    public var storageClass: StorageClass
    /// Pinned entries are never evicted by limits or age.
    public var isPinned: Bool
    /// When the entry (its current body) was stored.
    public var createdAt: Date
    /// The last time the entry was read or written; LRU eviction and `maxAge` use it.
    public var lastAccessedAt: Date

    /// Creates an entry description (normally only the store does this).
    public init(key: StoreKey, metadata: Data, bodySize: Int64, checksum: UInt32, storageClass: StorageClass,
                isPinned: Bool, createdAt: Date, lastAccessedAt: Date) {
        self.key = key
        self.metadata = metadata
        self.bodySize = bodySize
        self.checksum = checksum
        self.storageClass = storageClass
        self.isPinned = isPinned
        self.createdAt = createdAt
        self.lastAccessedAt = lastAccessedAt
    }
}

/// One stored entry read in full: its index information and its body bytes (checksum verified).
///
/// A value type whose fields live in one immutable, shared box: copying an entry (the memory tier returns a copy
/// on every hit) costs one reference count instead of one per string and buffer, and the struct's layout is fixed
/// (a reference and a `Double`), so copies and destruction are inline rather than through type metadata. Setting
/// `info` or `body` puts a new box in place; other copies are unchanged.
public struct StoredEntry: Sendable {
    /// The shared, immutable fields; `info.lastAccessedAt` is superseded by `lastAccessed`.
    final class Storage: Sendable {
        let info: EntryInfo
        let body: Data
        init(info: EntryInfo, body: Data) {
            self.info = info
            self.body = body
        }
    }

    private(set) var storage: Storage
    /// `info.lastAccessedAt` as `Date.timeIntervalSinceReferenceDate` (exact round trip), kept out of the box so
    /// a hit can stamp its access time on a copy without a new box.
    private var lastAccessed: Double

    /// Creates a stored entry value.
    public init(info: EntryInfo, body: Data) {
        storage = Storage(info: info, body: body)
        lastAccessed = info.lastAccessedAt.timeIntervalSinceReferenceDate
    }

    /// The index information, including the metadata bytes.
    public var info: EntryInfo {
        get {
            var info = storage.info
            info.lastAccessedAt = Date(timeIntervalSinceReferenceDate: lastAccessed)
            return info
        }
        set {
            storage = Storage(info: newValue, body: storage.body)
            lastAccessed = newValue.lastAccessedAt.timeIntervalSinceReferenceDate
        }
    }

    /// The body bytes; `info.bodySize` of them.
    public var body: Data {
        get { storage.body }
        set { storage = Storage(info: storage.info, body: newValue) }
    }

    /// The entry's key (`info.key` without copying the rest of `info`).
    public var key: StoreKey { storage.info.key }

    /// The caller's metadata bytes (`info.metadata` without copying the rest of `info`).
    public var metadata: Data { storage.info.metadata }

    /// This entry with `info.lastAccessedAt` set to `date`, sharing the rest.
    func accessed(at date: Date) -> StoredEntry {
        var copy = self
        copy.lastAccessed = date.timeIntervalSinceReferenceDate
        return copy
    }
}
