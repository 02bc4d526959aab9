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
///
/// A value type (copy-on-write): the fields but `lastAccessedAt` live in one shared box, so a copy (the disk and
/// memory hit paths copy rows several times) costs one reference count and has a fixed layout, instead of one
/// count per string and buffer through type metadata. Changing a field of a shared copy gives it its own box.
public struct EntryInfo: Sendable, Hashable {
    /// The shared fields; mutated in place only while uniquely referenced (``fieldsForWriting()``), so shared
    /// copies on other threads never see a change.
    final class Fields: @unchecked Sendable {
        var key: StoreKey
        var metadata: Data
        var bodySize: Int64
        var checksum: UInt32
        var storageClass: StorageClass
        var isPinned: Bool
        var createdAt: Date

        init(key: StoreKey, metadata: Data, bodySize: Int64, checksum: UInt32, storageClass: StorageClass,
             isPinned: Bool, createdAt: Date) {
            self.key = key
            self.metadata = metadata
            self.bodySize = bodySize
            self.checksum = checksum
            self.storageClass = storageClass
            self.isPinned = isPinned
            self.createdAt = createdAt
        }

        func copy() -> Fields {
            Fields(key: key, metadata: metadata, bodySize: bodySize, checksum: checksum, storageClass: storageClass,
                   isPinned: isPinned, createdAt: createdAt)
        }

        func isEqual(to other: Fields) -> Bool {
            self === other || (key == other.key && metadata == other.metadata && bodySize == other.bodySize
                && checksum == other.checksum && storageClass == other.storageClass && isPinned == other.isPinned
                && createdAt == other.createdAt)
        }
    }

    private var fields: Fields
    /// `lastAccessedAt` as `Date.timeIntervalSinceReferenceDate` (exact round trip), outside the box: hits set it
    /// on copies, which then need no box of their own.
    private var accessed: Double

    /// The box, made unique first (copied when another value shares it).
    private mutating func fieldsForWriting() -> Fields {
        if !isKnownUniquelyReferenced(&fields) { fields = fields.copy() }
        return fields
    }

    /// The entry's key.
    public var key: StoreKey {
        get { fields.key }
        set { fieldsForWriting().key = newValue }
    }
    /// The caller's metadata bytes (the HTTP layer stores the response head here), returned unchanged.
    public var metadata: Data {
        get { fields.metadata }
        set { fieldsForWriting().metadata = newValue }
    }
    /// Size of the body in bytes.
    public var bodySize: Int64 {
        get { fields.bodySize }
        set { fieldsForWriting().bodySize = newValue }
    }
    /// zlib crc32 of the body, checked when the body is read.
    public var checksum: UInt32 {
        get { fields.checksum }
        set { fieldsForWriting().checksum = newValue }
    }
    /// Permanent or session-only.
    public var storageClass: StorageClass {
        get { fields.storageClass }
        set { fieldsForWriting().storageClass = newValue }
    }
    /// Pinned entries are never evicted by limits or age.
    public var isPinned: Bool {
        get { fields.isPinned }
        set { fieldsForWriting().isPinned = newValue }
    }
    /// When the entry (its current body) was stored.
    public var createdAt: Date {
        get { fields.createdAt }
        set { fieldsForWriting().createdAt = newValue }
    }
    /// The last time the entry was read or written; LRU eviction and `maxAge` use it.
    public var lastAccessedAt: Date {
        get { Date(timeIntervalSinceReferenceDate: accessed) }
        set { accessed = newValue.timeIntervalSinceReferenceDate }
    }

    /// Creates an entry description (normally only the store does this).
    public init(key: StoreKey, metadata: Data, bodySize: Int64, checksum: UInt32, storageClass: StorageClass,
                isPinned: Bool, createdAt: Date, lastAccessedAt: Date) {
        fields = Fields(key: key, metadata: metadata, bodySize: bodySize, checksum: checksum,
                        storageClass: storageClass, isPinned: isPinned, createdAt: createdAt)
        accessed = lastAccessedAt.timeIntervalSinceReferenceDate
    }

    /// Equal when every field is equal (`lastAccessedAt` included).
    public static func == (a: EntryInfo, b: EntryInfo) -> Bool {
        a.lastAccessedAt == b.lastAccessedAt && a.fields.isEqual(to: b.fields)
    }

    /// Hashes every field.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(fields.key)
        hasher.combine(fields.metadata)
        hasher.combine(fields.bodySize)
        hasher.combine(fields.checksum)
        hasher.combine(fields.storageClass)
        hasher.combine(fields.isPinned)
        hasher.combine(fields.createdAt)
        hasher.combine(lastAccessedAt)
    }
}

/// One stored entry read in full: its index information and its body bytes (checksum verified).
///
/// A value type whose fields live in one immutable, shared box: copying an entry (the memory tier returns a copy
/// on every hit) costs one reference count instead of one per string and buffer, and the struct's layout is fixed
/// (a reference and a `Double`), so copies and destruction are inline rather than through type metadata. Setting
/// `info` or `body` puts a new box in place; other copies are unchanged.
public struct StoredEntry: Sendable {
    /// The shared fields; `info.lastAccessedAt` is superseded by `lastAccessed`. Immutable (`let`s only), so
    /// sharing it across threads is safe; it is not final because the memory tier's node is one (a hit's copy then
    /// shares the node itself: no second object to reach), and the node's own mutable state is guarded by the tier.
    class Storage: @unchecked Sendable {
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

    /// An entry whose fields are `storage`'s, `info.lastAccessedAt` included.
    init(sharing storage: Storage) {
        self.storage = storage
        lastAccessed = storage.info.lastAccessedAt.timeIntervalSinceReferenceDate
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
