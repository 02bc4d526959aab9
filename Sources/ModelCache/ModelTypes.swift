import Foundation

/// A model type with a version number that is stored next to every value of that type.
///
/// Bump `modelVersion` whenever a change makes old stored values wrong to decode (renamed fields, changed
/// meaning); values with another version are then dropped and reported as a miss
/// (`ModelDiscardReason.typeVersionChanged`). Types that don't adopt the protocol have version 0; arrays,
/// optionals and dictionaries of a versioned model carry their element's version.
public protocol VersionedModel {
    /// The version of the type's stored shape; any `Int`, compared for equality only.
    static var modelVersion: Int { get }
}

/// An array of versioned models has its elements' version, so `[Article]` follows `Article.modelVersion`.
extension Array: VersionedModel where Element: VersionedModel {
    /// The element type's `modelVersion`.
    public static var modelVersion: Int { Element.modelVersion }
}

/// An optional versioned model has the wrapped type's version.
extension Optional: VersionedModel where Wrapped: VersionedModel {
    /// The wrapped type's `modelVersion`.
    public static var modelVersion: Int { Wrapped.modelVersion }
}

/// A dictionary of versioned models has its values' version.
extension Dictionary: VersionedModel where Value: VersionedModel {
    /// The value type's `modelVersion`.
    public static var modelVersion: Int { Value.modelVersion }
}

/// A value read from the cache, with how old it is.
public struct CachedModel<Value: Sendable>: Sendable {
    /// The decoded value.
    public var value: Value
    /// When the value was written (the cache's clock at `set` time).
    public var savedAt: Date
    /// Seconds between `savedAt` and the lookup (never negative).
    public var age: TimeInterval
    /// True when `age` is greater than the staleness threshold in force for the lookup.
    public var isStale: Bool

    /// Creates a cached model; `age` is in seconds.
    public init(value: Value, savedAt: Date, age: TimeInterval, isStale: Bool) {
        self.value = value
        self.savedAt = savedAt
        self.age = age
        self.isStale = isStale
    }
}

extension CachedModel: Equatable where Value: Equatable {}

/// The outcome of `ModelCache.lookup(_:as:)`: a hit, a plain miss, or a stored value that was dropped.
///
/// An exhaustive enum on purpose: a lookup has exactly these three outcomes, a caller `switch`es over them without
/// a `default`, and a new case would be a new meaning every caller must handle. Error codes
/// (``ModelCacheError/Code``) are structs instead because new failure classes must be addable without breaking
/// callers.
public enum ModelLookup<Value: Sendable>: Sendable {
    /// The value was found and decoded.
    case hit(CachedModel<Value>)
    /// Nothing is stored under the key.
    case miss
    /// Something was stored but could not be used; it has been removed (the reason says why).
    case discarded(ModelDiscardReason)

    /// The cached model of a hit; nil for a miss or a discarded value.
    public var cached: CachedModel<Value>? {
        if case .hit(let model) = self { return model }
        return nil
    }
}

/// Where a `ModelUpdate` came from.
public enum ModelUpdateSource: String, Sendable, Equatable {
    /// Read from the cache (memory or disk).
    case cache
    /// Delivered by the caller's fetch during a refresh.
    case fetch
}

/// One element of `ModelCache.values(forKey:as:fetch:)`: the cached value at once, then the fresh one.
public struct ModelUpdate<Value: Sendable>: Sendable {
    /// The value to show.
    public var value: Value
    /// `.cache` for the value read at once, `.fetch` for the value a refresh delivered.
    public var source: ModelUpdateSource
    /// When the value was written; for a fetched value, when the fetch completed.
    public var savedAt: Date
    /// Seconds since `savedAt` at the time of the update (0 for a fetched value).
    public var age: TimeInterval
    /// True when a cached value is older than the staleness threshold; always false for a fetched value.
    public var isStale: Bool
    /// For a fetched value that could not be stored (encoding or disk failure): why. Nil when stored, and
    /// always nil for a cached value. The value is delivered either way.
    public var storageError: ModelCacheError?

    /// Creates an update; `age` is in seconds.
    public init(value: Value, source: ModelUpdateSource, savedAt: Date, age: TimeInterval, isStale: Bool,
                storageError: ModelCacheError? = nil) {
        self.value = value
        self.source = source
        self.savedAt = savedAt
        self.age = age
        self.isStale = isStale
        self.storageError = storageError
    }
}

/// When `ModelCache.values(forKey:as:fetch:)` runs the caller's fetch.
public enum RefreshPolicy: Sendable, Equatable {
    /// Fetch only when nothing usable is cached or the cached value is stale (the default).
    case ifStaleOrMissing
    /// Always fetch after yielding the cached value (pull-to-refresh).
    case always
}

/// Counters of one `ModelCache` instance since it was opened (not persisted).
public struct ModelCacheStatistics: Sendable, Equatable {
    /// Reads answered from the decoded-value memory tier (no decoding).
    public var memoryHits = 0
    /// Reads answered by decoding a value read from the store.
    public var diskHits = 0
    /// Reads that found nothing.
    public var misses = 0
    /// Stored values dropped (version change, type change, decode failure, bad metadata).
    public var discards = 0
    /// Values written (by `set` or by a refresh).
    public var writes = 0
    /// Fetches actually started by refreshes (coalesced callers share one).
    public var fetches = 0
    /// Values held in the memory tier now.
    public var memoryEntries = 0
    /// Estimated bytes held by the memory tier now (sum of the values' encoded sizes plus a fixed overhead).
    public var memoryCost = 0

    /// Creates zeroed statistics.
    public init() {}
}
