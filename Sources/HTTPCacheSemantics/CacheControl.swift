import Foundation

/// Parsed `Cache-Control` directives of a request or a response (RFC 9111 §5.2, RFC 8246, RFC 5861).
///
/// Names are case-insensitive; arguments may be tokens or quoted strings. A repeated `max-age` or `s-maxage`
/// with differing values (in one line or over several lines) means 0, i.e. stale (RFC 9111 §4.2.1); other
/// repeated directives keep the most restrictive value (largest min-fresh, smallest max-stale …). Invalid
/// arguments never throw: each becomes the RFC's defined meaning (an invalid `max-age` or `s-maxage` means
/// "stale", §4.2.1) or is ignored, and a sentence is appended to ``problems``. Unknown directives are kept
/// in ``extensions`` and otherwise ignored (§5.2.3). All durations are whole seconds.
public struct CacheControl: Sendable, Hashable {
    /// The request's `max-stale` argument (§5.2.1.2).
    public enum MaxStale: Sendable, Hashable {
        /// `max-stale` without a value: any staleness is acceptable.
        case any
        /// `max-stale=N`: staleness up to N seconds is acceptable.
        case seconds(Int)

        /// Whether a response stale by `staleness` seconds is acceptable.
        public func allows(_ staleness: TimeInterval) -> Bool {
            switch self {
            case .any: return true
            case .seconds(let limit): return staleness <= TimeInterval(limit)
            }
        }
    }

    /// A directive this parser does not know (§5.2.3), kept for inspection: lower-cased name, argument or `nil`.
    public struct Extension: Sendable, Hashable {
        /// The directive name, lower-cased.
        public var name: String
        /// The argument (quotes removed), or `nil` when the directive had none.
        public var value: String?
    }

    /// `max-age` in seconds (§5.2.1.1 request, §5.2.2.1 response); `nil` when absent. Invalid → 0.
    public var maxAge: Int?
    /// `s-maxage` in seconds (§5.2.2.10, shared caches only); `nil` when absent. Invalid → 0.
    public var sMaxAge: Int?
    /// `no-store` (§5.2.1.5, §5.2.2.5).
    public var noStore = false
    /// Unqualified `no-cache` (§5.2.1.4, §5.2.2.4): the stored response must be validated before each use.
    public var noCache = false
    /// Field names (lower-cased) of a qualified response `no-cache="a, b"` (§5.2.2.4); empty when unqualified.
    public var noCacheFields: [String] = []
    /// `private` (§5.2.2.7), qualified or not.
    public var isPrivate = false
    /// Field names (lower-cased) of a qualified `private="a, b"`; empty when unqualified.
    public var privateFields: [String] = []
    /// `public` (§5.2.2.9).
    public var isPublic = false
    /// `must-revalidate` (§5.2.2.2).
    public var mustRevalidate = false
    /// `proxy-revalidate` (§5.2.2.8, shared caches only).
    public var proxyRevalidate = false
    /// `must-understand` (§5.2.2.3).
    public var mustUnderstand = false
    /// `no-transform` (§5.2.1.6, §5.2.2.6).
    public var noTransform = false
    /// `immutable` (RFC 8246): do not revalidate while fresh, even on a reload.
    public var immutable = false
    /// `stale-while-revalidate` in seconds (RFC 5861 §3); `nil` when absent or invalid.
    public var staleWhileRevalidate: Int?
    /// `stale-if-error` in seconds (RFC 5861 §4), request or response; `nil` when absent or invalid.
    public var staleIfError: Int?
    /// Request `max-stale` (§5.2.1.2); `nil` when absent or invalid (no stale response accepted).
    public var maxStale: MaxStale?
    /// Request `min-fresh` in seconds (§5.2.1.3); `nil` when absent or invalid.
    public var minFresh: Int?
    /// Request `only-if-cached` (§5.2.1.7).
    public var onlyIfCached = false
    /// Unknown directives, in order of appearance.
    public var extensions: [Extension] = []
    /// Human-readable notes about malformed or conflicting input and how it was interpreted.
    public var problems: [String] = []

    /// No directives.
    public init() {}

    /// Parses one or more comma-separated directives from a single field value.
    public init(parsing value: String) {
        self.init()
        parse(value)
    }

    /// Parses every `Cache-Control` line of `headers` (as one combined list, RFC 9110 §5.3).
    public init(headers: HTTPHeaders) {
        self.init()
        for field in headers.fields where field.hasName("Cache-Control") { parse(field.value) }
    }

    /// Request directives, with `Pragma: no-cache` treated as `no-cache` when no `Cache-Control` is present (§5.4).
    public static func request(_ headers: HTTPHeaders) -> CacheControl {
        parsed(headers, pragmaNoCacheReason: "Pragma: no-cache without Cache-Control treated as no-cache (RFC 9111 §5.4)")
    }

    /// Response directives, with `Pragma: no-cache` treated as `no-cache` when no `Cache-Control` is present.
    ///
    /// RFC 9111 gives response `Pragma` no meaning; honouring it (HTTP/1.0 practice) only adds revalidation.
    public static func response(_ headers: HTTPHeaders) -> CacheControl {
        parsed(headers, pragmaNoCacheReason: "response Pragma: no-cache without Cache-Control treated as no-cache (HTTP/1.0)")
    }

    /// The `Cache-Control` lines of `headers`; with no `Cache-Control` but `Pragma: no-cache`, `no-cache` is set and
    /// `reason` recorded in `problems`.
    private static func parsed(_ headers: HTTPHeaders, pragmaNoCacheReason reason: String) -> CacheControl {
        var cc = CacheControl(headers: headers)
        if !headers.contains("Cache-Control"), pragmaNoCache(headers) {
            cc.noCache = true
            cc.problems.append(reason)
        }
        return cc
    }

    private static func pragmaNoCache(_ headers: HTTPHeaders) -> Bool {
        var found = false
        for value in headers.values(for: "Pragma") {
            HeaderSyntax.forEachMember(value) { if HTTPHeaders.namesEqual(String($0), "no-cache") { found = true } }
        }
        return found
    }
}
