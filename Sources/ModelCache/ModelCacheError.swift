import CacheStore
import Foundation

/// Everything that can go wrong in a `ModelCache` call that reports errors: a ``code`` to compare, plus what
/// the code carries (``typeName``, ``key``, ``storeError``, ``underlying``).
///
/// Reads never throw: a value that cannot be read is a miss (see `ModelDiscardReason`). Writes, removals,
/// erasing a user and refreshes throw this type. A struct rather than an enum, so codes can be added without
/// breaking a caller's `switch`.
public struct ModelCacheError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure happened; compare with `==` or match with `case`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: Sendable, Hashable {
            case encodingFailed, storage, invalidNamespace, refreshFailed
        }

        private let kind: Kind

        private init(_ kind: Kind) {
            self.kind = kind
        }

        /// The value could not be encoded with the configured `ModelEncoding`; nothing was written.
        public static let encodingFailed = Code(.encodingFailed)
        /// The underlying `CacheStore` failed (disk full, permission denied, I/O ...); see ``storeError``.
        public static let storage = Code(.storage)
        /// The configured namespace is not 1–24 characters of `[A-Za-z0-9._-]` (or is "." / "..").
        public static let invalidNamespace = Code(.invalidNamespace)
        /// The caller-supplied fetch of a refresh failed; the cached value (if any) was kept.
        public static let refreshFailed = Code(.refreshFailed)

        /// The code in words: `encoding failed`, `storage error`, `invalid namespace`, `refresh failed`.
        public var description: String {
            switch kind {
            case .encodingFailed: return "encoding failed"
            case .storage: return "storage error"
            case .invalidNamespace: return "invalid namespace"
            case .refreshFailed: return "refresh failed"
            }
        }
    }

    /// What kind of failure happened.
    public var code: Code
    /// For ``Code/encodingFailed``: the Swift type name (`String(reflecting:)`) of the value; else nil.
    public var typeName: String?
    /// For ``Code/refreshFailed``: the model key; else nil.
    public var key: String?
    /// For ``Code/invalidNamespace``: the refused name; else nil.
    public var namespace: String?
    /// For ``Code/storage``: the store's error; else nil.
    public var storeError: CacheStoreError?
    /// For ``Code/encodingFailed`` the encoder's error, for ``Code/refreshFailed`` the error the fetch threw,
    /// for ``Code/storage`` the store's error; nil for ``Code/invalidNamespace``.
    public var underlying: (any Error)?

    private init(_ code: Code, typeName: String? = nil, key: String? = nil, namespace: String? = nil,
                 storeError: CacheStoreError? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.typeName = typeName
        self.key = key
        self.namespace = namespace
        self.storeError = storeError
        self.underlying = underlying ?? storeError
    }

    /// The value of type `type` (a Swift type name) could not be encoded; `underlying` is the encoder's error.
    public static func encodingFailed(type: String, underlying: any Error) -> ModelCacheError {
        ModelCacheError(.encodingFailed, typeName: type, underlying: underlying)
    }

    /// The underlying store failed with `error`.
    public static func storage(_ error: CacheStoreError) -> ModelCacheError {
        ModelCacheError(.storage, storeError: error)
    }

    /// The namespace `name` is not 1–24 characters of `[A-Za-z0-9._-]` (or is "." / "..").
    public static func invalidNamespace(_ name: String) -> ModelCacheError {
        ModelCacheError(.invalidNamespace, namespace: name)
    }

    /// The fetch of a refresh of `key` failed with `underlying`.
    public static func refreshFailed(key: String, underlying: any Error) -> ModelCacheError {
        ModelCacheError(.refreshFailed, key: key, underlying: underlying)
    }

    /// The failure in words, on one line: `cannot encode <type>: <encoder error>`, the store's words
    /// (`disk full: ...`), `invalid namespace '<name>' (...)`, `fetch of '<key>' failed: <fetch error>`.
    public var description: String {
        let cause = underlying.map { "\($0)" } ?? ""
        switch code {
        case .encodingFailed:
            return "cannot encode \(typeName ?? "the value"): \(cause)"
        case .storage:
            return storeError?.description ?? code.description
        case .invalidNamespace:
            return "invalid namespace '\(namespace ?? "")' (1–24 characters of [A-Za-z0-9._-], not '.' or '..')"
        case .refreshFailed:
            return "fetch of '\(key ?? "")' failed: \(cause)"
        default:
            return cause.isEmpty ? code.description : "\(code): \(cause)"
        }
    }
}

/// Why a stored value was dropped and reported as a miss instead of being returned.
///
/// After an app update, values archived by the old version may no longer be readable: a value written by another
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
