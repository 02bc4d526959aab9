import Foundation

/// How a request may use the cache: five behaviours, each with one name (``name``, the `dlcache get --policy`
/// spelling) that reasons and messages use. Apple's `URLRequest.CachePolicy` names and ASI's names are aliases
/// (static members), so `.useProtocolCachePolicy` or `.dontLoad` still read as before and `switch` over the
/// five cases stays exhaustive.
public enum CachePolicy: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `use-protocol`: RFC 9111 rules — serve fresh, revalidate stale. The default.
    case useProtocol
    /// `reload`: always fetch from the origin without reading the cache; the response may still be stored.
    case reload
    /// `return-cache-else-load`: serve any matching stored response, fresh or stale; fetch only when there is none.
    case returnCacheElseLoad
    /// `return-cache-dont-load`: serve any matching stored response, fresh or stale; never use the network
    /// (else unsatisfiable).
    case returnCacheDontLoad
    /// `reload-revalidating`: always validate a stored response with a conditional request.
    case reloadRevalidating

    /// The policy's one name, kebab-case: `use-protocol`, `reload`, `return-cache-else-load`,
    /// `return-cache-dont-load`, `reload-revalidating`.
    public var name: String {
        switch self {
        case .useProtocol: return "use-protocol"
        case .reload: return "reload"
        case .returnCacheElseLoad: return "return-cache-else-load"
        case .returnCacheDontLoad: return "return-cache-dont-load"
        case .reloadRevalidating: return "reload-revalidating"
        }
    }

    /// ``name``.
    public var description: String { name }

    /// Whether the policy forbids contacting the origin (``returnCacheDontLoad``).
    public var forbidsNetwork: Bool { self == .returnCacheDontLoad }

    /// `URLRequest.CachePolicy.useProtocolCachePolicy`: ``useProtocol``.
    public static let useProtocolCachePolicy = CachePolicy.useProtocol
    /// `URLRequest.CachePolicy.reloadIgnoringLocalCacheData`: ``reload``.
    public static let reloadIgnoringLocalCacheData = CachePolicy.reload
    /// `URLRequest.CachePolicy.returnCacheDataElseLoad`: ``returnCacheElseLoad``.
    public static let returnCacheDataElseLoad = CachePolicy.returnCacheElseLoad
    /// `URLRequest.CachePolicy.returnCacheDataDontLoad`: ``returnCacheDontLoad``.
    public static let returnCacheDataDontLoad = CachePolicy.returnCacheDontLoad
    /// `URLRequest.CachePolicy.reloadRevalidatingCacheData`: ``reloadRevalidating``.
    public static let reloadRevalidatingCacheData = CachePolicy.reloadRevalidating
    /// ASI's `ASIAskServerIfModifiedWhenStaleCachePolicy`: ``useProtocol``.
    public static let askServerIfModifiedWhenStale = CachePolicy.useProtocol
    /// ASI's `ASIAskServerIfModifiedCachePolicy`: ``reloadRevalidating``.
    public static let askServerIfModified = CachePolicy.reloadRevalidating
    /// ASI's `ASIOnlyLoadIfNotCachedCachePolicy`: ``returnCacheElseLoad``.
    public static let onlyLoadIfNotCached = CachePolicy.returnCacheElseLoad
    /// ASI's `ASIDontLoadCachePolicy`: ``returnCacheDontLoad``.
    public static let dontLoad = CachePolicy.returnCacheDontLoad
}

/// The caller's settings for one evaluation: cache mode, policy and the caller's overrides of the server's
/// directives.
///
/// Precedence of caller lifetimes: a stored ``StoredResponse/overrideExpiry`` (the persisted form, set when the
/// response was stored with a lifetime) wins over ``lifetimeOverride``, which wins over the server's freshness.
public struct EvaluationOptions: Sendable, Hashable {
    /// Private (default) or shared cache rules.
    public var mode: CacheMode
    /// The request's cache policy; default ``CachePolicy/useProtocolCachePolicy``.
    public var policy: CachePolicy
    /// Ignore the server's `Cache-Control`, `Pragma` and `Expires` for storability and freshness
    /// (ASI `shouldRespectCacheControlHeaders = false`); heuristic and override lifetimes still apply.
    public var ignoreServerCacheControl: Bool
    /// Seconds; replaces the server's freshness lifetime, counted from when the response was received
    /// (so the server's `Age` does not shorten it). `nil` = the server's lifetime.
    public var lifetimeOverride: TimeInterval?
    /// ASI's `fallbackToCacheIfLoadFails`: when the origin cannot be reached (or answers 5xx) serve a stale
    /// stored response unless a directive (must-revalidate, no-cache, proxy-revalidate in shared mode) forbids it.
    public var fallbackToCacheIfLoadFails: Bool
    /// Serve a stale stored response when the origin cannot be reached (RFC 9111 §4.2.4: "when the cache is
    /// disconnected"), i.e. when ``RFC9111/errorDecision(stored:request:now:options:status:)`` is given no status;
    /// never for an HTTP error status (that needs `stale-if-error` or ``fallbackToCacheIfLoadFails``), never
    /// past must-revalidate, no-cache, or proxy-revalidate / s-maxage in a shared cache, never when the request
    /// says `no-cache`. Default `true`.
    public var servesStaleWhenDisconnected: Bool
    /// Targeted cache-control fields (RFC 9213), in priority order, e.g. `["CDN-Cache-Control"]`: the first one
    /// present with a valid, non-empty value replaces `Cache-Control` and `Expires` for storage and freshness.
    /// Empty (the default) = none.
    public var targetedFields: [String]
    /// Fraction of (Date − Last-Modified) used as heuristic freshness lifetime (RFC 9111 §4.2.2); default 0.1.
    public var heuristicFraction: Double
    /// Upper bound in seconds of a heuristic freshness lifetime; default 604,800 (7 days).
    public var heuristicCap: TimeInterval
    /// The key and HMAC-SHA-256 function of the hashes that stand for credentials and cookies in stored keys
    /// (``CacheKeySecret``); default ``CacheKeySecret/none`` (no hash: nothing that depends on credentials matches).
    /// Must be the secret the stored responses were stored with.
    public var keySecret: CacheKeySecret

    /// Creates options; every parameter has the documented default.
    public init(
        mode: CacheMode = .private,
        policy: CachePolicy = .useProtocolCachePolicy,
        ignoreServerCacheControl: Bool = false,
        lifetimeOverride: TimeInterval? = nil,
        fallbackToCacheIfLoadFails: Bool = false,
        servesStaleWhenDisconnected: Bool = true,
        targetedFields: [String] = [],
        heuristicFraction: Double = 0.1,
        heuristicCap: TimeInterval = 86_400 * 7,
        keySecret: CacheKeySecret = .none
    ) {
        self.mode = mode
        self.policy = policy
        self.ignoreServerCacheControl = ignoreServerCacheControl
        self.lifetimeOverride = lifetimeOverride
        self.fallbackToCacheIfLoadFails = fallbackToCacheIfLoadFails
        self.servesStaleWhenDisconnected = servesStaleWhenDisconnected
        self.targetedFields = targetedFields
        self.heuristicFraction = heuristicFraction
        self.heuristicCap = heuristicCap
        self.keySecret = keySecret
    }
}
