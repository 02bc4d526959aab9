import Foundation

/// The RFC 9111 caching decisions as pure functions: time is always a parameter, nothing reads a clock,
/// a disk or the network. Each function's documentation names the section it implements.
///
/// Named `RFC9111` rather than after the module so `HTTPCacheSemantics.X` stays usable as module qualification.
public enum RFC9111 {
    /// Status codes that are heuristically cacheable (RFC 9110 §15.1 / RFC 9111 §4.2.2); 206 is listed by the
    /// RFC but this cache does not store partial content (see ``storability(request:response:mode:ignoreServerCacheControl:)``).
    public static let heuristicallyCacheableStatuses: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Status codes whose caching requirements this cache understands (RFC 9110 §15 registry, 304/206 aside):
    /// a response with another status is stored only with explicit freshness and never with `must-understand`.
    public static let understoodStatuses: Set<Int> = Set(200...205)
        .union([300, 301, 302, 303, 305, 307, 308])
        .union(Set(400...417)).union([421, 422, 426, 428, 429, 431, 451])
        .union(Set(500...505)).union([511])

    /// Hop-by-hop fields never stored nor forwarded (RFC 9110 §7.6.1, RFC 9111 §3.1), lower-cased.
    public static let hopByHopFields: Set<String> = [
        "connection", "proxy-connection", "keep-alive", "te", "transfer-encoding", "upgrade", "trailer",
        "proxy-authenticate", "proxy-authorization",
    ]

    /// Fields a 304 or HEAD response must not overwrite when freshening (RFC 9111 §3.2): they describe the stored
    /// body as stored (length, coding — libcurl decodes gzip — and range), lower-cased.
    public static let fieldsKeptWhenFreshening: Set<String> = ["content-length", "content-encoding", "content-range", "transfer-encoding"]

    /// Methods whose responses this cache stores and serves (RFC 9110 §9.2.3 cacheable, §4.1): GET and HEAD.
    static func isCacheableMethod(_ method: String) -> Bool { method == "GET" || method == "HEAD" }

    /// Methods that are safe (RFC 9110 §9.2.1) and therefore never invalidate (§4.4).
    static func isSafeMethod(_ method: String) -> Bool {
        ["GET", "HEAD", "OPTIONS", "TRACE"].contains(method)
    }

    /// Seconds as text for reasons: whole numbers without decimals, others with one decimal, plus " s".
    static func seconds(_ value: TimeInterval) -> String {
        guard value.isFinite else { return "\(value) s" }
        if value == value.rounded(), abs(value) < 1e15 { return "\(Int(value)) s" }
        return "\((value * 10).rounded() / 10) s"
    }

    /// The Connection-named fields (RFC 9110 §7.6.1) of `headers`, lower-cased.
    static func connectionNamedFields(_ headers: HTTPHeaders) -> Set<String> {
        Set(HeaderSyntax.listMembers(of: headers, named: "Connection").map { $0.lowercased() })
    }

    /// Builds the ``StoredResponse`` to persist for a fresh response: Vary's request values captured (credentials
    /// as ``EvaluationOptions/keySecret``'s hashes), the credential partition set (§3.5,
    /// ``credentialPartition(request:response:options:)``), and ``EvaluationOptions/lifetimeOverride`` turned into
    /// ``StoredResponse/overrideExpiry`` (`responseTime + lifetime`). The header fields are kept as given (see
    /// ``storedHeaders(_:)`` for the §3.1 filtering), except that a shared cache (``EvaluationOptions/mode``)
    /// stores no ``perClientResponseFields`` (`Set-Cookie`: one client's state, §3.1, §7.3).
    ///
    /// `slidingLifetime` (seconds, `nil` = none) is stored as is and also sets the first expiry when no
    /// lifetime override is given. Times are the §4.2.3 `request_time` and `response_time`.
    public static func makeStoredResponse(
        request: CacheRequest, response: CacheResponse, requestTime: Date, responseTime: Date,
        options: EvaluationOptions = EvaluationOptions(), slidingLifetime: TimeInterval? = nil
    ) -> StoredResponse {
        var expiry: Date?
        if let lifetime = options.lifetimeOverride { expiry = responseTime.addingTimeInterval(lifetime) }
        if expiry == nil, let sliding = slidingLifetime { expiry = responseTime.addingTimeInterval(sliding) }
        var kept = response
        if options.mode == .shared { kept.headers = withoutPerClientFields(response.headers) }
        return StoredResponse(
            response: kept, requestTime: requestTime, responseTime: responseTime,
            varyingRequestHeaders: varyingRequestHeaders(response: response, request: request.headers,
                                                         secret: options.keySecret),
            requestMethod: request.method, overrideExpiry: expiry, slidingLifetime: slidingLifetime,
            credentialPartition: credentialPartition(request: request, response: response, options: options))
    }

    /// Applies a sliding expiry after a hit: returns a copy whose ``StoredResponse/slidingLifetime`` is
    /// `requestedSliding` when given (seconds; the request asks for a sliding expiry of that length), else the
    /// stored one, and whose ``StoredResponse/overrideExpiry`` is `now + slidingLifetime`. Without a sliding
    /// lifetime from either, returns `stored` unchanged.
    public static func renewedAfterHit(_ stored: StoredResponse, now: Date,
                                       requestedSliding: TimeInterval? = nil) -> StoredResponse {
        guard let sliding = requestedSliding ?? stored.slidingLifetime else { return stored }
        var copy = stored
        copy.slidingLifetime = sliding
        copy.overrideExpiry = now.addingTimeInterval(sliding)
        return copy
    }
}

/// Another name for ``RFC9111``, matching the okhttp-style "policy engine" wording.
public typealias CachePolicyEngine = RFC9111
