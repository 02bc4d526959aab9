import Foundation
import HTTPCacheSemantics
import CacheStore
import SharedTier

/// Where a response came from: a finer answer than a cached-or-not flag (ASI's `didUseCachedResponse`).
///
/// An exhaustive enum on purpose: RFC 9111 leaves a cache exactly these four ways to answer (from the origin, from
/// storage, after a 304, stale when the origin failed), a caller `switch`es over them without a `default`, and the
/// raw values are the `source` of the CLI's JSON. Error codes (``DownloadError/Code``, ``TransportError/Code``) are
/// structs instead because new failure classes must be addable without breaking callers.
public enum ResponseSource: String, Sendable, Codable, CaseIterable {
    /// Downloaded from the origin (full response).
    case network
    /// Served from the cache without contacting the origin (fresh, or allowed by the policy).
    case cache
    /// Served from the cache after the origin confirmed it with 304 Not Modified (RFC 9111 §4.3.4).
    case revalidated
    /// Served stale from the cache because the origin could not be reached (served while disconnected,
    /// `Configuration.servesStaleWhenDisconnected`), or failed / answered 5xx and stale-if-error or
    /// `fallbackToCacheIfLoadFails` allowed it (RFC 9111 §4.2.4).
    case stale
}

/// A response body: bytes in memory, or a file for bodies larger than `Configuration.inMemoryBodyLimit`.
public enum ResponseBody: Sendable, Hashable {
    /// The whole body in memory.
    case data(Data)
    /// The body in a file. For a stored response this is the store's blob file (read it, do not modify or
    /// move it; it disappears when the entry is replaced or evicted); for a response that was not stored it
    /// is a temporary file the caller owns.
    case file(URL)
}

/// What a DownloadCache call returns: the HTTP response, its body and where it came from.
public struct CachedResponse: Sendable {
    /// The final URL (after redirects were followed).
    public var url: URL
    /// The status code.
    public var status: Int
    /// The reason phrase as the origin sent it (the transport's), or the stored one for a cached response.
    public var statusText: String
    /// The header fields as served: from the cache with `Age` (RFC 9111 §4.2.3, §5.1) and hop-by-hop fields
    /// removed; never contradicting the body (see ``TransportResponse/headers``).
    public var headers: HTTPHeaders
    /// The body, in memory or as a file.
    public var body: ResponseBody
    /// The body's size in bytes.
    public var bodySize: Int64
    /// Where the response came from.
    public var source: ResponseSource
    /// The current age in seconds (RFC 9111 §4.2.3): when served from the cache, at serving time; for a network
    /// response, as just received (its `Age` header plus the request's round trip). `nil` only for values
    /// built by callers without one.
    public var age: TimeInterval?
    /// Whether the response is fresh (RFC 9111 §4.2) — for a cached response when served, for a network
    /// response as just received (`Age: 100` with `max-age=60` is not fresh); an unqualified `no-cache`
    /// (§5.2.2.4) response is never fresh.
    public var isFresh: Bool
    /// The cache decision's reason in words, from `RFC9111.evaluate` (e.g. "fresh: age 3 s, freshness lifetime
    /// 60 s (max-age=60)").
    public var reason: String
    /// The store's blob file holding the body, when the body is stored file-backed; else `nil`.
    public var storedBodyURL: URL?
    /// The 1xx interim responses (e.g. 103 Early Hints) the origin sent before this response, in order; empty for
    /// a response served from the cache (interim responses are never stored, RFC 9111 §3) and on URLSession.
    public var interimResponses: [InterimResponse] = []
    /// The redirects followed to reach this response, first hop first; empty when none was followed.
    public var redirects: [RedirectHop] = []
    /// How the cache handled the request (RFC 9211 `Cache-Status`): hit, or why it was forwarded, the origin's
    /// status, the remaining freshness, whether it was stored. Not part of ``headers``; `dlcache driver` and
    /// `dlcache get -v` show it as a `Cache-Status` field.
    public var cacheStatus: CacheStatus
    /// For a body served from a stored blob file: that file, verified and held open
    /// (``CacheStore/openVerifiedBody(for:matching:)``); nil for in-memory bodies and network responses. Read the
    /// body through it (``data()`` does): the path in ``body`` may be unlinked at any moment by an eviction, a
    /// replacement or a purge in another process, the open file stays readable. The descriptor is closed when the
    /// last copy of this value is released.
    public var storedBody: OpenedBody?
    /// The crc32 check still running on ``storedBody`` (``StoredBodyCheck/whileStreaming``); nil: checked.
    var storedBodyCheck: BodyCheck?

    /// `true` unless the body came from the network (ASI's `didUseCachedResponse`): a hit, a revalidated or a stale
    /// response. ``source`` tells them apart.
    public var isFromCache: Bool { source != .network }

    /// Creates a response value.
    public init(url: URL, status: Int, statusText: String, headers: HTTPHeaders, body: ResponseBody, bodySize: Int64,
                source: ResponseSource, age: TimeInterval?, isFresh: Bool, reason: String, storedBodyURL: URL? = nil) {
        self.url = url
        self.status = status
        self.statusText = statusText
        self.headers = headers
        self.body = body
        self.bodySize = bodySize
        self.source = source
        self.age = age
        self.isFresh = isFresh
        self.reason = reason
        self.storedBodyURL = storedBodyURL
        self.cacheStatus = CacheStatus(hit: source == .cache, forward: source == .cache ? nil : .miss)
    }

    /// The body's bytes, loading a file body into memory.
    /// - Throws: the file system's error when a file body cannot be read (e.g. it was evicted meanwhile).
    public func data() throws -> Data {
        switch body {
        case .data(let data): return data
        case .file(let url):
            guard let storedBody else { return try Data(contentsOf: url) }
            var data = Data()
            while true {
                let chunk = try storedBody.read(from: Int64(data.count), upToCount: 1 << 20)
                if chunk.isEmpty { return data }
                data.append(chunk)
            }
        }
    }
}

/// One redirect followed on the way to a response: the 3xx answer of one URL and where it pointed.
public struct RedirectHop: Sendable, Hashable {
    /// The URL that answered with the redirect.
    public var url: URL
    /// The 3xx status code.
    public var status: Int
    /// The absolute URL the `Location` field pointed to (resolved against ``url``), the next hop.
    public var location: URL
    /// Where the 3xx answer came from (a stored redirect is a cache hit like any response).
    public var source: ResponseSource

    /// Creates a hop value.
    public init(url: URL, status: Int, location: URL, source: ResponseSource) {
        self.url = url
        self.status = status
        self.location = location
        self.source = source
    }
}
