import CacheStore
import Foundation

/// Everything that can go wrong in a `ModelCache` call that reports errors.
///
/// Reads never throw: a value that cannot be read is a miss (see `ModelDiscardReason`). Writes, removals,
/// erasing a user and refreshes throw this type.
public enum ModelCacheError: Error, Sendable, CustomStringConvertible {
    /// The value could not be encoded with the configured `ModelEncoding`; nothing was written.
    /// `type` is the Swift type name (`String(reflecting:)`), `underlying` the encoder's error.
    case encodingFailed(type: String, underlying: any Error)
    /// The underlying `CacheStore` failed (disk full, permission denied, I/O ...); see the wrapped error's code.
    case storage(CacheStoreError)
    /// The configured namespace is not 1–24 characters of `[A-Za-z0-9._-]` (or is "." / "..").
    case invalidNamespace(String)
    /// The caller-supplied fetch of a refresh failed; the cached value (if any) was kept.
    /// `key` is the model key, `underlying` the error the fetch threw.
    case refreshFailed(key: String, underlying: any Error)

    /// The failure in words, on one line: `cannot encode <type>: <encoder error>`, the store's words
    /// (`disk full: ...`), `invalid namespace '<name>' (...)`, `fetch of '<key>' failed: <fetch error>`.
    public var description: String {
        switch self {
        case .encodingFailed(let type, let underlying):
            return "cannot encode \(type): \(underlying)"
        case .storage(let error):
            return error.description
        case .invalidNamespace(let name):
            return "invalid namespace '\(name)' (1–24 characters of [A-Za-z0-9._-], not '.' or '..')"
        case .refreshFailed(let key, let underlying):
            return "fetch of '\(key)' failed: \(underlying)"
        }
    }
}

/// Why a stored value was dropped and reported as a miss instead of being returned.
///
/// Implements the seeds' "after an app update old archives cannot be restored": a value written by another
/// cache version or type version, or one that no longer decodes, is removed from the cache — never a crash,
/// never a wrong value.
public enum ModelDiscardReason: Sendable, Equatable, CustomStringConvertible {
    /// The value was written under another `Configuration.cacheVersion` (stored, current).
    case cacheVersionChanged(stored: String, current: String)
    /// The value was written as another Swift type (stored type name, requested type name).
    case typeChanged(stored: String, requested: String)
    /// The value was written with another model version (`VersionedModel.modelVersion` or a per-call version).
    case typeVersionChanged(stored: Int, current: Int)
    /// The stored bytes no longer decode as the requested type; the text is the decoder's error.
    case undecodable(String)
    /// The metadata stored next to the value is unreadable (corrupted or not written by ModelCache).
    case corruptMetadata(String)

    /// A one-line description of the reason.
    public var description: String {
        switch self {
        case .cacheVersionChanged(let stored, let current):
            return "cache version changed (stored '\(stored)', current '\(current)')"
        case .typeChanged(let stored, let requested):
            return "type changed (stored \(stored), requested \(requested))"
        case .typeVersionChanged(let stored, let current):
            return "type version changed (stored \(stored), current \(current))"
        case .undecodable(let detail):
            return "value no longer decodes: \(detail)"
        case .corruptMetadata(let detail):
            return "metadata unreadable: \(detail)"
        }
    }
}

/// Something the cache did on its own that the app may want to log, delivered to
/// `Configuration.eventHandler` on the calling thread.
public enum ModelCacheEvent: Sendable, CustomStringConvertible {
    /// A stored value was dropped and reported as a miss.
    case discarded(key: String, reason: ModelDiscardReason)
    /// A value fetched by a refresh was delivered but could not be stored.
    case storeFailed(key: String, error: ModelCacheError)
    /// A refresh's fetch failed; the cached value, if any, was kept.
    case refreshFailed(key: String, error: ModelCacheError)
    /// The decoded-value memory tier was trimmed (memory pressure); the count of values dropped from memory.
    case memoryTrimmed(removedEntries: Int)

    /// A one-line description of the event.
    public var description: String {
        switch self {
        case .discarded(let key, let reason): return "discarded '\(key)': \(reason)"
        case .storeFailed(let key, let error): return "store of fetched '\(key)' failed: \(error)"
        case .refreshFailed(let key, let error): return "refresh of '\(key)' failed: \(error)"
        case .memoryTrimmed(let removed): return "memory tier trimmed: \(removed) values dropped"
        }
    }
}
