import Foundation
import CacheStore
import HTTPCacheSemantics
import SharedTier

/// What observers of `DownloadCache.events` are told (the calls a download delegate would get).
public enum CacheEvent: Sendable {
    /// A call finished: `url` is the requested URL; `isCachedData` is `source != .network` (the body came from
    /// the store, revalidated or not).
    case succeeded(url: URL, source: ResponseSource, isCachedData: Bool)
    /// A call failed with `error`.
    case failed(url: URL, error: DownloadError)
    /// Stored responses for `url` were removed because an unsafe method succeeded on it (RFC 9111 §4.4).
    case invalidated(url: URL)
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
