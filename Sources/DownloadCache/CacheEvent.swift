import Foundation
import CacheStore
import HTTPCacheSemantics
import SharedTier

/// What observers of `DownloadCache.events` are told (the calls a download delegate would get).
///
/// The same shape as `ModelCache`'s `ModelCacheEvent`: a ``kind`` (a struct with static members, so kinds can be
/// added without breaking a caller's `switch`, which needs a `default`) and the values that kind carries.
public struct CacheEvent: Sendable, CustomStringConvertible {
    /// What happened. Compare with `==` or match with `case`.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Value: Sendable, Hashable { case succeeded, failed, invalidated }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// A call finished with a response (``CacheEvent/source``, ``CacheEvent/isCachedData``).
        public static let succeeded = Kind(.succeeded)
        /// A call failed (``CacheEvent/error``).
        public static let failed = Kind(.failed)
        /// Stored responses for the URL were removed because an unsafe method succeeded on it (RFC 9111 §4.4).
        public static let invalidated = Kind(.invalidated)

        /// `succeeded`, `failed` or `invalidated`.
        public var description: String {
            switch value {
            case .succeeded: return "succeeded"
            case .failed: return "failed"
            case .invalidated: return "invalidated"
            }
        }
    }

    /// What happened.
    public let kind: Kind
    /// The requested URL.
    public let url: URL
    /// For ``Kind/succeeded``: where the response came from; `nil` otherwise.
    public let source: ResponseSource?
    /// For ``Kind/succeeded``: `source != .network` (the body came from the store, revalidated or not).
    public let isCachedData: Bool
    /// For ``Kind/failed``: why; `nil` otherwise.
    public let error: DownloadError?

    private init(_ kind: Kind, url: URL, source: ResponseSource? = nil, isCachedData: Bool = false,
                 error: DownloadError? = nil) {
        self.kind = kind
        self.url = url
        self.source = source
        self.isCachedData = isCachedData
        self.error = error
    }

    /// A ``Kind/succeeded`` event.
    public static func succeeded(url: URL, source: ResponseSource, isCachedData: Bool) -> CacheEvent {
        CacheEvent(.succeeded, url: url, source: source, isCachedData: isCachedData)
    }
    /// A ``Kind/failed`` event.
    public static func failed(url: URL, error: DownloadError) -> CacheEvent { CacheEvent(.failed, url: url, error: error) }
    /// A ``Kind/invalidated`` event.
    public static func invalidated(url: URL) -> CacheEvent { CacheEvent(.invalidated, url: url) }

    /// One line: `succeeded <url> (<source>)`, `failed <url>: <error>`, `invalidated <url>`.
    public var description: String {
        switch kind {
        case .succeeded: return "succeeded \(url.absoluteString) (\(source.map { "\($0)" } ?? "-"))"
        case .failed: return "failed \(url.absoluteString): \(error.map { "\($0)" } ?? "-")"
        default: return "\(kind) \(url.absoluteString)"
        }
    }
}

/// Progress of one download: bytes received so far and bytes expected (`nil` when the length is unknown).
public struct DownloadProgress: Sendable, Hashable {
    /// The URL being downloaded.
    public var url: URL
    /// Body bytes received so far.
    public var bytesReceived: Int64
    /// Body bytes expected (Content-Length), `nil` when unknown.
    public var bytesExpected: Int64?

    /// Creates a progress value.
    public init(url: URL, bytesReceived: Int64, bytesExpected: Int64?) {
        self.url = url
        self.bytesReceived = bytesReceived
        self.bytesExpected = bytesExpected
    }
}

/// Aggregate progress of a prefetch: URLs completed / failed out of `total`, body bytes so far.
public struct PrefetchProgress: Sendable, Hashable {
    /// URLs finished successfully so far.
    public var completed: Int
    /// URLs failed so far.
    public var failed: Int
    /// URLs in the prefetch.
    public var total: Int
    /// Body bytes of the finished URLs.
    public var bytes: Int64

    /// Creates a progress value.
    public init(completed: Int, failed: Int, total: Int, bytes: Int64) {
        self.completed = completed
        self.failed = failed
        self.total = total
        self.bytes = bytes
    }
}

/// The outcome of `DownloadCache.prefetch(_:pin:concurrency:progress:)`.
public struct PrefetchReport: Sendable {
    /// One URL that could not be prefetched and why.
    public struct Failure: Sendable {
        /// The URL.
        public var url: URL
        /// Why it failed (`.http(status:)` for a non-2xx answer).
        public var error: DownloadError

        /// Creates a failure record.
        public init(url: URL, error: DownloadError) {
            self.url = url
            self.error = error
        }
    }

    /// URLs now available from the cache (or downloaded when not storable), in completion order.
    public var succeeded: [URL] = []
    /// URLs that failed, in completion order.
    public var failed: [Failure] = []
    /// Body bytes of the succeeded URLs.
    public var bytes: Int64 = 0
    /// Succeeded URLs that were already cached (no body downloaded).
    public var fromCache: Int = 0
    /// Succeeded URLs downloaded from the origin.
    public var fromNetwork: Int = 0

    /// An empty report.
    public init() {}
}
