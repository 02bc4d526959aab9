import Foundation
import CacheStore
import HTTPCacheSemantics
import SharedTier

/// How long a stored response stays fresh, chosen per request (``RequestOptions/expiration``).
///
/// Every case but ``server`` replaces only the freshness *lifetime* (RFC 9111 §4.2.1: `max-age`, `s-maxage`,
/// `Expires`, heuristics), counted from when the response was received, so the server's `Age` does not shorten
/// it. It does not lift the server's validation requirements: a stored response with `Cache-Control: no-cache`
/// (§5.2.2.4), or `must-revalidate` / `proxy-revalidate` once stale, is still revalidated before use, and
/// `no-store` is still not stored — unless ``RequestOptions/ignoreServerCacheControl`` is also set.
public enum CacheExpiration: Sendable, Hashable, CustomStringConvertible {
    /// The server's freshness lifetime (RFC 9111 §4.2.1) or the heuristic one (§4.2.2). The default.
    case server
    /// Fresh for this many seconds after the response was received, replacing the server's lifetime; a hit does
    /// not extend it (ASI `secondsToCache`). A 304 revalidation restarts it from the 304's receipt.
    case seconds(TimeInterval)
    /// Fresh for this many seconds after the response was received and again after each hit (sliding expiry,
    /// Kingfisher's `ExpirationExtending.cacheTime`): the expiry moves to hit time + the seconds.
    case sliding(TimeInterval)
    /// Fresh as long as it is stored (a lifetime of ``neverLifetime`` seconds); limits and purges still remove it.
    case never

    /// Seconds of the lifetime ``never`` stands for: 1,000 years of 365.25 days.
    public static let neverLifetime: TimeInterval = 1_000 * 365.25 * 86_400

    /// Seconds that replace the server's freshness lifetime; `nil` for ``server``.
    public var lifetime: TimeInterval? {
        switch self {
        case .server: return nil
        case .seconds(let seconds), .sliding(let seconds): return seconds
        case .never: return Self.neverLifetime
        }
    }

    /// Seconds each hit renews the expiry by (``sliding(_:)``); `nil` for the other cases.
    public var slidingLifetime: TimeInterval? {
        if case .sliding(let seconds) = self { return seconds }
        return nil
    }

    /// The same lifetime without renewal on hits: ``sliding(_:)`` becomes ``seconds(_:)``, the rest stay.
    var withoutRenewal: CacheExpiration {
        if case .sliding(let seconds) = self { return .seconds(seconds) }
        return self
    }

    /// `server`, `seconds(60)`, `sliding(60)` or `never`.
    public var description: String {
        switch self {
        case .server: return "server"
        case .seconds(let seconds): return "seconds(\(seconds))"
        case .sliding(let seconds): return "sliding(\(seconds))"
        case .never: return "never"
        }
    }
}
