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
public struct ModelDiscardReason: Sendable, Equatable, CustomStringConvertible {
    /// The reason classes. A struct with static members, so classes can be added without breaking a caller's
    /// `switch` (which needs a `default`); compare with `==` or match with `case`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: Sendable, Hashable {
            case cacheVersionChanged, typeChanged, typeVersionChanged, undecodable, corruptMetadata
        }
        private let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// The value was written under another `Configuration.cacheVersion`.
        public static let cacheVersionChanged = Code(.cacheVersionChanged)
        /// The value was written as another Swift type.
        public static let typeChanged = Code(.typeChanged)
        /// The value was written with another model version (`VersionedModel.modelVersion` or a per-call version).
        public static let typeVersionChanged = Code(.typeVersionChanged)
        /// The stored bytes no longer decode as the requested type.
        public static let undecodable = Code(.undecodable)
        /// The metadata stored next to the value is unreadable (corrupted or not written by ModelCache).
        public static let corruptMetadata = Code(.corruptMetadata)

        /// The class in words.
        public var description: String {
            switch kind {
            case .cacheVersionChanged: return "cache version changed"
            case .typeChanged: return "type changed"
            case .typeVersionChanged: return "type version changed"
            case .undecodable: return "value no longer decodes"
            case .corruptMetadata: return "metadata unreadable"
            }
        }
    }

    /// The reason class.
    public let code: Code
    /// For the three "changed" codes: what was stored (cache version, type name, or model version as decimal
    /// text); `nil` for the others.
    public let stored: String?
    /// For the three "changed" codes: what is current or requested, like ``stored``; `nil` for the others.
    public let current: String?
    /// For ``Code/undecodable`` and ``Code/corruptMetadata``: the decoder's error in words; `nil` for the others.
    public let detail: String?

    private init(_ code: Code, stored: String? = nil, current: String? = nil, detail: String? = nil) {
        self.code = code
        self.stored = stored
        self.current = current
        self.detail = detail
    }

    /// ``Code/cacheVersionChanged``: the value was written under cache version `stored`, the cache uses `current`.
    public static func cacheVersionChanged(stored: String, current: String) -> ModelDiscardReason {
        ModelDiscardReason(.cacheVersionChanged, stored: stored, current: current)
    }
    /// ``Code/typeChanged``: the value was written as type `stored`, read as type `requested`.
    public static func typeChanged(stored: String, requested: String) -> ModelDiscardReason {
        ModelDiscardReason(.typeChanged, stored: stored, current: requested)
    }
    /// ``Code/typeVersionChanged``: the value was written with model version `stored`, read with `current`.
    public static func typeVersionChanged(stored: Int, current: Int) -> ModelDiscardReason {
        ModelDiscardReason(.typeVersionChanged, stored: String(stored), current: String(current))
    }
    /// ``Code/undecodable``, with the decoder's error in words.
    public static func undecodable(_ detail: String) -> ModelDiscardReason { ModelDiscardReason(.undecodable, detail: detail) }
    /// ``Code/corruptMetadata``, with the decoder's error in words.
    public static func corruptMetadata(_ detail: String) -> ModelDiscardReason {
        ModelDiscardReason(.corruptMetadata, detail: detail)
    }

    /// A one-line description of the reason.
    public var description: String {
        switch code {
        case .cacheVersionChanged:
            return "cache version changed (stored '\(stored ?? "")', current '\(current ?? "")')"
        case .typeChanged:
            return "type changed (stored \(stored ?? ""), requested \(current ?? ""))"
        case .typeVersionChanged:
            return "type version changed (stored \(stored ?? ""), current \(current ?? ""))"
        default:
            return "\(code): \(detail ?? "")"
        }
    }
}

/// Something the cache did on its own that the app may want to log, delivered through `ModelCache.events`
/// (as `DownloadCache` delivers its `CacheEvent`s, in the same shape: a ``kind`` and the values it carries).
public struct ModelCacheEvent: Sendable, CustomStringConvertible {
    /// What happened. A struct with static members, so kinds can be added without breaking a caller's `switch`
    /// (which needs a `default`); compare with `==` or match with `case`.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Value: Sendable, Hashable { case discarded, storeFailed, refreshFailed, memoryTrimmed }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// A stored value was dropped and reported as a miss (``ModelCacheEvent/discardReason``).
        public static let discarded = Kind(.discarded)
        /// A value fetched by a refresh was delivered but could not be stored (``ModelCacheEvent/error``).
        public static let storeFailed = Kind(.storeFailed)
        /// A refresh's fetch failed; the cached value, if any, was kept (``ModelCacheEvent/error``).
        public static let refreshFailed = Kind(.refreshFailed)
        /// The decoded-value memory tier was trimmed (memory pressure; ``ModelCacheEvent/removedEntries``).
        public static let memoryTrimmed = Kind(.memoryTrimmed)

        /// `discarded`, `store failed`, `refresh failed` or `memory trimmed`.
        public var description: String {
            switch value {
            case .discarded: return "discarded"
            case .storeFailed: return "store failed"
            case .refreshFailed: return "refresh failed"
            case .memoryTrimmed: return "memory trimmed"
            }
        }
    }

    /// What happened.
    public let kind: Kind
    /// The model key concerned; `nil` for ``Kind/memoryTrimmed``.
    public let key: String?
    /// For ``Kind/discarded``: why; `nil` otherwise.
    public let discardReason: ModelDiscardReason?
    /// For ``Kind/storeFailed`` and ``Kind/refreshFailed``: the error; `nil` otherwise.
    public let error: ModelCacheError?
    /// For ``Kind/memoryTrimmed``: the count of values dropped from memory; `nil` otherwise.
    public let removedEntries: Int?

    private init(_ kind: Kind, key: String? = nil, discardReason: ModelDiscardReason? = nil,
                 error: ModelCacheError? = nil, removedEntries: Int? = nil) {
        self.kind = kind
        self.key = key
        self.discardReason = discardReason
        self.error = error
        self.removedEntries = removedEntries
    }

    /// A ``Kind/discarded`` event.
    public static func discarded(key: String, reason: ModelDiscardReason) -> ModelCacheEvent {
        ModelCacheEvent(.discarded, key: key, discardReason: reason)
    }
    /// A ``Kind/storeFailed`` event.
    public static func storeFailed(key: String, error: ModelCacheError) -> ModelCacheEvent {
        ModelCacheEvent(.storeFailed, key: key, error: error)
    }
    /// A ``Kind/refreshFailed`` event.
    public static func refreshFailed(key: String, error: ModelCacheError) -> ModelCacheEvent {
        ModelCacheEvent(.refreshFailed, key: key, error: error)
    }
    /// A ``Kind/memoryTrimmed`` event.
    public static func memoryTrimmed(removedEntries: Int) -> ModelCacheEvent {
        ModelCacheEvent(.memoryTrimmed, removedEntries: removedEntries)
    }

    /// A one-line description of the event.
    public var description: String {
        let key = self.key ?? ""
        switch kind {
        case .discarded: return "discarded '\(key)': \(discardReason.map { "\($0)" } ?? "")"
        case .storeFailed: return "store of fetched '\(key)' failed: \(error.map { "\($0)" } ?? "")"
        case .refreshFailed: return "refresh of '\(key)' failed: \(error.map { "\($0)" } ?? "")"
        default: return "memory tier trimmed: \(removedEntries ?? 0) values dropped"
        }
    }
}
