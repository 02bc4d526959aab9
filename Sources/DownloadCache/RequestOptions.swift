import CacheStore
import Foundation
import HTTPCacheSemantics
import SharedTier

/// Per-request choices: cache policy (Apple's and ASIDownloadCache's), storage, expiration, progress.
///
/// ASI's policies combine: `readFromCache = false` is `ASIDoNotReadFromCacheCachePolicy`, `writeToCache = false`
/// is `ASIDoNotWriteToCacheCachePolicy`, `fallbackToCacheIfLoadFails` is `ASIFallbackToCacheIfLoadFailsCachePolicy`,
/// and `policy` carries the rest (`.useProtocol` = ASI's `.askServerIfModifiedWhenStale`, the default;
/// `.reloadRevalidating` = `.askServerIfModified`; `.returnCacheElseLoad` = `.onlyLoadIfNotCached`;
/// `.returnCacheDontLoad` = `.dontLoad`).
public struct RequestOptions: Sendable {
    /// The cache policy; default ``CachePolicy/useProtocol`` (RFC 9111).
    public var policy: CachePolicy
    /// Serve the stored response when the origin is unreachable or answers 5xx, marked `.stale` (ASI).
    public var fallbackToCacheIfLoadFails: Bool
    /// Ignore the server's Cache-Control / Pragma / Expires for storability and freshness (ASI
    /// `shouldRespectCacheControlHeaders = false`); heuristic lifetimes and ``expiration`` still apply.
    public var ignoreServerCacheControl: Bool
    /// Where a stored response lives: `.permanent`, or `.session` (deleted at the next open / `clearSession()`).
    public var storage: StorageClass
    /// Whether stored responses may be used (`false` = ASI `DoNotReadFromCache`, CLI `--no-read`).
    ///
    /// Policy ``CachePolicy/reload`` (`URLRequest`'s `reloadIgnoringLocalCacheData`) is this switch in policy
    /// form: either one means the cache is not read at all — no hit, no revalidation of a stored response, no
    /// stale fallback, no shared tier — while a storable response is still written. `false` combines with the
    /// other policies (with ``CachePolicy/returnCacheDataDontLoad`` nothing can answer: unsatisfiable).
    public var readFromCache: Bool
    /// Whether a storable response is written to the cache (`false` = ASI `DoNotWriteToCache`, CLI `--no-store`).
    public var writeToCache: Bool
    /// How long the stored response stays fresh: the server's lifetime (default), a fixed or sliding number of
    /// seconds, or never stale (``CacheExpiration``).
    public var expiration: CacheExpiration
    /// Pin the stored response so limits and age never evict it (pre-caching).
    public var pin: Bool
    /// Seconds allowed for each network exchange; `nil` = the transport's default idle timeout.
    public var timeout: TimeInterval?
    /// The stall rule for this request's exchanges; `nil` = `Configuration.stallRule`. A rule with
    /// `minimumBytes` 0 switches it off for this request.
    public var stallRule: StallRule?
    /// Follow 3xx redirects (each hop cached under its own key); `false` returns the 3xx as is.
    public var followRedirects: Bool
    /// Redirect hops followed before failing with `.tooManyRedirects`; `nil` = `Configuration.maxRedirects`.
    public var maxRedirects: Int?
    /// The request content for unsafe methods (POST, PUT ...); `nil` sends none.
    public var body: Data?
    /// The most body bytes per second this request's exchanges receive (libcurl's `CURLOPT_MAX_RECV_SPEED_LARGE`,
    /// like curl's `--limit-rate`); `nil` = unlimited. The URLSession transport has no such setting and ignores it.
    public var maxReceiveBytesPerSecond: Int64?
    /// Called with the request URL when the call starts waiting for another process on this machine that is
    /// fetching the same cache key (``Configuration/crossProcessLockTimeout``), before the wait; `nil` = not told.
    public var waitingForAnotherProcess: (@Sendable (URL) -> Void)?
    /// Called with the bytes received / expected of this request's download (only for the caller that
    /// started a coalesced download; others can use `DownloadCache.progress(for:)`).
    public var progress: (@Sendable (DownloadProgress) -> Void)?

    /// When the crc32 of a stored body read from its blob file is checked, for ``DownloadCache/stream(_:options:)``
    /// only; default ``StoredBodyCheck/beforeServing``. Every other call checks before it returns.
    public var storedBodyCheck: StoredBodyCheck = .beforeServing

    /// Follows the body file of this request's final 2xx exchange while it is written (``DownloadCache/stream(_:options:)``).
    var bodyTap: BodyTap?

    /// For a caller that fetches only to store (pre-caching): a storable 200 whose announced length is over the
    /// per-entry limit (``Configuration/maxEntryBytes``) fails at its first body byte (`bodyTooLarge`, "not stored:
    /// … entry limit (maxEntryBytes); not fetched") instead of being downloaded and then refused.
    package var refusesBodiesOverTheEntryLimit = false

    /// Creates options; every parameter defaults to the RFC 9111 behaviour described on its property.
    public init(policy: CachePolicy = .useProtocolCachePolicy, fallbackToCacheIfLoadFails: Bool = false,
                ignoreServerCacheControl: Bool = false, storage: StorageClass = .permanent,
                readFromCache: Bool = true, writeToCache: Bool = true, expiration: CacheExpiration = .server,
                pin: Bool = false, timeout: TimeInterval? = nil,
                followRedirects: Bool = true, body: Data? = nil,
                progress: (@Sendable (DownloadProgress) -> Void)? = nil, stallRule: StallRule? = nil) {
        self.stallRule = stallRule
        self.policy = policy
        self.fallbackToCacheIfLoadFails = fallbackToCacheIfLoadFails
        self.ignoreServerCacheControl = ignoreServerCacheControl
        self.storage = storage
        self.readFromCache = readFromCache
        self.writeToCache = writeToCache
        self.expiration = expiration
        self.pin = pin
        self.timeout = timeout
        self.followRedirects = followRedirects
        self.body = body
        self.progress = progress
    }

    /// Whether this request may use stored responses: ``readFromCache`` and not policy ``CachePolicy/reload``.
    var readsCache: Bool { readFromCache && policy != .reload }

    /// A string that is equal for two option values that make the same network exchange and storage
    /// choices; part of the coalescing key.
    var coalescingFingerprint: String {
        "\(policy)|\(fallbackToCacheIfLoadFails)|\(ignoreServerCacheControl)|\(storage.rawValue)|\(readFromCache)|"
            + "\(writeToCache)|\(expiration)|\(pin)|\(refusesBodiesOverTheEntryLimit)"
    }
}

/// When a stored body's crc32 is checked against its entry (``RequestOptions/storedBodyCheck``). Either way no
/// damaged stored body is ever delivered as a good one; they differ in when the caller learns it.
public enum StoredBodyCheck: Sendable, Equatable {
    /// Before the first byte is delivered: the file is read through once (about 0.1 s per 500 MB in the page
    /// cache), unless this process verified this version of the file already; a damaged entry is removed and the
    /// request goes to the origin as on a miss.
    case beforeServing
    /// While the body is streamed, on a thread of its own, for a fresh hit answered from a blob file without
    /// contacting the origin (any other answer is checked before serving): a ``ResponseStream`` may deliver the
    /// stored bytes before the verdict, and its end — `nil` from ``ResponseStream/Iterator/next()`` or
    /// ``ResponseStream/Iterator/nextRegion(maxBytes:)``, and ``ResponseStream/response()`` — comes only after the
    /// check passed. On a mismatch the entry is removed and the iterator (after the bytes it delivered, or
    /// earlier) and ``ResponseStream/response()`` throw ``DownloadError/Code/storedBodyDamaged``: the caller must
    /// discard what it received (truncate its file) and may ask again, which fetches from the origin. For
    /// consumers that can take back what they wrote, such as `dlcache get -o FILE` (a regular file).
    case whileStreaming
}
