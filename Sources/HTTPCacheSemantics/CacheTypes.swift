import Foundation

/// Whether the cache is private (one user, e.g. a browser or app) or shared (many users, e.g. a proxy).
///
/// RFC 9111 §1 / §3.5 / §5.2.2.7 / §5.2.2.10: a shared cache honours `s-maxage` and `proxy-revalidate`,
/// refuses `private` responses and refuses responses to requests carrying `Authorization` unless allowed.
public enum CacheMode: Sendable, Hashable, CaseIterable {
    /// A cache used by a single user (the default for an app's download cache).
    case `private`
    /// A cache whose stored responses can be served to several users.
    case shared
}

/// What the cache knows of a request: method, target URI and header fields.
public struct CacheRequest: Sendable, Hashable {
    /// The request method, case-sensitive as in RFC 9110 §9.1 (`"GET"`, `"HEAD"`, `"POST"` …).
    public var method: String
    /// The target URI (RFC 9110 §7.1); its fragment is ignored by the cache key.
    public var url: URL
    /// The request header fields (names case-insensitive; order and duplicates kept).
    public var headers: HTTPHeaders

    /// Creates a request description; the method defaults to `"GET"` and the headers to none.
    public init(method: String = "GET", url: URL, headers: HTTPHeaders = []) {
        self.method = method
        self.url = url
        self.headers = headers
    }
}

/// A response as received from the origin or as stored in the cache: status code and header fields.
///
/// The body is not part of it: the semantics module never sees bytes.
public struct CacheResponse: Sendable, Hashable, Codable {
    /// The three-digit status code (RFC 9110 §15), e.g. 200 or 304.
    public var status: Int
    /// The response header fields (names case-insensitive; order and duplicates kept).
    public var headers: HTTPHeaders

    /// Creates a response description from a status code and header fields.
    public init(status: Int, headers: HTTPHeaders) {
        self.status = status
        self.headers = headers
    }
}

/// A stored response plus what RFC 9111 §4.2.3 needs to compute its age, and the request headers Vary named.
public struct StoredResponse: Sendable, Hashable, Codable {
    /// The stored status and header fields (after any freshening, §3.2).
    public var response: CacheResponse
    /// When the request that produced (or last freshened) the response was sent: `request_time` of §4.2.3.
    public var requestTime: Date
    /// When the response (or the last 304 that freshened it) was received: `response_time` of §4.2.3.
    public var responseTime: Date
    /// The request's values of the fields named by the response's `Vary` (the secondary key source, §4.1).
    public var varyingRequestHeaders: HTTPHeaders
    /// The method of the request that produced the response (`"GET"` or `"HEAD"`).
    public var requestMethod: String
    /// The caller's absolute expiry (a fixed or sliding lifetime the caller chose, ASI's `secondsToCache`); `nil` = the server's freshness.
    ///
    /// When set it replaces the server's freshness lifetime: the response is fresh exactly while `now` is
    /// before this date. It wins over ``EvaluationOptions/lifetimeOverride`` (it is that option's persisted form).
    public var overrideExpiry: Date?
    /// Sliding lifetime in seconds: when set, each hit renews ``overrideExpiry`` to `now + slidingLifetime`
    /// (see ``RFC9111/renewedAfterHit(_:now:)``); `nil` = no sliding expiry.
    public var slidingLifetime: TimeInterval?
    /// Who may be served the response (RFC 9111 §3.5): the keyed tag of the credentials it was obtained with
    /// (``RFC9111/credentialTag(_:secret:)``), ``RFC9111/anonymousPartition`` for requests without credentials,
    /// or `nil` for any request (the origin made it shareable). See ``RFC9111/credentialPartition(request:response:options:)``.
    public var credentialPartition: String?

    /// Creates a stored response; `requestTime`/`responseTime` are the §4.2.3 clock readings.
    public init(
        response: CacheResponse,
        requestTime: Date,
        responseTime: Date,
        varyingRequestHeaders: HTTPHeaders = [],
        requestMethod: String = "GET",
        overrideExpiry: Date? = nil,
        slidingLifetime: TimeInterval? = nil,
        credentialPartition: String? = nil
    ) {
        self.response = response
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.varyingRequestHeaders = varyingRequestHeaders
        self.requestMethod = requestMethod
        self.overrideExpiry = overrideExpiry
        self.slidingLifetime = slidingLifetime
        self.credentialPartition = credentialPartition
    }
}

/// Whether a response may be stored (RFC 9111 §3), with the reason when it may not.
public enum Storability: Sendable, Hashable {
    /// The response may be stored.
    case store
    /// The response must not be stored; `reason` explains which rule forbade it (with its RFC section).
    case doNotStore(reason: String)

    /// Whether this is ``store``.
    public var isStorable: Bool {
        if case .store = self { return true }
        return false
    }
}

/// The cache's answer to a request (RFC 9111 §4), each with a human-readable reason.
public enum CacheDecision: Sendable, Hashable {
    /// Serve the stored response as is: it is fresh, or stale but allowed (max-stale, policy, fallback).
    case useStored(reason: String)
    /// Serve the stored response now and send `conditional` in the background (RFC 5861 stale-while-revalidate).
    ///
    /// `conditional` carries validators when the stored response has any; otherwise it is the plain request.
    case useStoredAndRevalidate(conditional: CacheRequest, reason: String)
    /// Send `conditional` (with `If-None-Match` / `If-Modified-Since`) and act on its answer (§4.3).
    case revalidate(conditional: CacheRequest, reason: String)
    /// No usable stored response: send the request to the origin (or deliver the network outcome).
    case fetch(reason: String)
    /// The request cannot be satisfied without the network and the network must not be used
    /// (only-if-cached → 504, policy `return-cache-dont-load`, or a failure that forbids serving stale).
    case unsatisfiable(reason: String)

    /// The human-readable reason carried by every decision ("why was this a miss?").
    public var reason: String {
        switch self {
        case .useStored(let r), .fetch(let r), .unsatisfiable(let r): return r
        case .useStoredAndRevalidate(_, let r), .revalidate(_, let r): return r
        }
    }

    /// Whether the stored response is to be served to the caller now (``useStored`` or ``useStoredAndRevalidate``).
    public var servesStored: Bool {
        switch self {
        case .useStored, .useStoredAndRevalidate: return true
        default: return false
        }
    }
}
