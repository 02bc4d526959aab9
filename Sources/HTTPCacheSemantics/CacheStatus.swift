import Foundation

/// This cache's member of the `Cache-Status` response field (RFC 9211): how the cache handled one request.
///
/// Serialised by ``fieldValue`` as an RFC 8941 List member: the cache name, then the parameters in RFC 9211 §2
/// order, e.g. `dlcache; hit; ttl=3590` or `dlcache; fwd=uri-miss; fwd-status=200; stored; ttl=3600`.
public struct CacheStatus: Sendable, Hashable, CustomStringConvertible {
    /// Why the request went to the origin (RFC 9211 §2.2 `fwd`).
    public enum Forward: String, Sendable, Hashable, CaseIterable {
        /// The cache was configured (or the request asked) not to use stored responses for it.
        case bypass
        /// The request method's semantics require forwarding (unsafe methods, RFC 9111 §4.4).
        case method
        /// Nothing was stored under the request's URI (primary cache key).
        case uriMiss = "uri-miss"
        /// Responses were stored under the URI, but none matched the request's Vary-selected fields.
        case varyMiss = "vary-miss"
        /// Not in the cache for another reason.
        case miss
        /// A fresh stored response was selected, but the request's directives did not allow its use.
        case request
        /// A stored response was selected, but it was stale (or had to be validated first).
        case stale
    }

    /// The name of this cache in the field: `dlcache`.
    public static let cacheName = "dlcache"

    /// Whether the response came from the cache without forwarding (RFC 9211 §2.1 `hit`).
    public var hit: Bool
    /// Why the request was forwarded; `nil` for a hit.
    public var forward: Forward?
    /// The status of the origin's response to the forwarded request (`fwd-status`), e.g. 304; `nil` when none
    /// arrived (origin unreachable) or nothing was forwarded.
    public var forwardStatus: Int?
    /// Remaining freshness in seconds (`ttl`, freshness lifetime − current age; negative when stale); `nil` when
    /// the response is not (and will not be) stored.
    public var ttl: Int?
    /// Whether the forwarded response was stored (`stored`).
    public var stored: Bool
    /// Whether the request was collapsed with another in-flight request for the same response (`collapsed`).
    public var collapsed: Bool
    /// The cache key, when it helps to see it (`key`).
    public var key: String?
    /// Extra detail in words (`detail`), e.g. `served stale while disconnected`.
    public var detail: String?

    /// Creates a value; every parameter but `hit` defaults to absent.
    public init(hit: Bool, forward: Forward? = nil, forwardStatus: Int? = nil, ttl: Int? = nil, stored: Bool = false,
                collapsed: Bool = false, key: String? = nil, detail: String? = nil) {
        self.hit = hit
        self.forward = forward
        self.forwardStatus = forwardStatus
        self.ttl = ttl
        self.stored = stored
        self.collapsed = collapsed
        self.key = key
        self.detail = detail
    }

    /// The `ttl` parameter for a freshness lifetime and current age in seconds: whole seconds, clamped to the
    /// RFC 8941 Integer range.
    public static func ttl(lifetime: TimeInterval, age: TimeInterval) -> Int? {
        let remaining = lifetime - age
        guard remaining.isFinite else { return nil }
        return Int(max(-999_999_999_999_999, min(999_999_999_999_999, remaining.rounded(.down))))
    }

    /// The field member, e.g. `dlcache; fwd=stale; fwd-status=304; ttl=60`.
    public var fieldValue: String {
        var parts = [Self.cacheName]
        if hit { parts.append("hit") }
        if let forward { parts.append("fwd=\(forward.rawValue)") }
        if let forwardStatus { parts.append("fwd-status=\(forwardStatus)") }
        if let ttl { parts.append("ttl=\(ttl)") }
        if stored { parts.append("stored") }
        if collapsed { parts.append("collapsed") }
        if let key { parts.append("key=\(Self.sfString(key))") }
        if let detail { parts.append("detail=\(Self.sfString(detail))") }
        return parts.joined(separator: "; ")
    }

    /// ``fieldValue``.
    public var description: String { fieldValue }

    /// An RFC 8941 String (§3.3.3): `"` and `\` escaped, bytes outside printable ASCII replaced by `?`.
    static func sfString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"", "\\": out += "\\" + String(scalar)
            case " "..."~": out.unicodeScalars.append(scalar)
            default: out += "?"
            }
        }
        return out + "\""
    }
}
