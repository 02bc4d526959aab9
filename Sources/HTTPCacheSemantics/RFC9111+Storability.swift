import Foundation

extension RFC9111 {
    /// Whether `response` to `request` may be stored (RFC 9111 §3, §3.1–3.5), and if not, why.
    ///
    /// Rules, in order: only GET and HEAD are stored; the status must be final, not 304 (it freshens, §4.3.4)
    /// and not 206 (partial content not supported: this cache stores complete responses only, §3.3–3.4);
    /// request `no-store`; `must-understand` with a status this cache does not understand; response `no-store`
    /// (ignored under `must-understand` with an understood status, §5.2.2.3); in a shared cache `private`
    /// (qualified or not — field stripping is not implemented) and credentials (`Authorization`, or user info
    /// in the URL, ``hasCredentials(_:)``) without `public`,
    /// `must-revalidate` or `s-maxage` (§3.5); `Vary: *` (can never be reused, §4.1); finally the response
    /// needs explicit cacheability (`public`, `private` in a private cache, `Expires`, `max-age`, `s-maxage` in
    /// a shared cache) or a heuristically cacheable status (§4.2.2). Statuses outside
    /// ``understoodStatuses`` (e.g. 299, 599) need explicit freshness (`max-age`, `s-maxage`, `Expires`) or
    /// `public` (then heuristic freshness applies, §4.2.2); codes above 599 are invalid and never stored (RFC 9110 §15).
    /// A response that sets a cookie (``setsCookie(_:)``: `Set-Cookie`) is stored by a private cache as any other
    /// (RFC 9111 §7.3: Set-Cookie does not inhibit caching); a shared cache stores it only when it is `public` or
    /// has `s-maxage` (``isSharedDespiteCookie(_:)``), and then without the cookie (``makeStoredResponse``): a
    /// cookie belongs to the one client it was sent to (§3.1, §7.3).
    ///
    /// With `targetedFields` (RFC 9213) the first valid targeted field replaces `Cache-Control` and `Expires`.
    /// With `ignoreServerCacheControl` the server's `Cache-Control`, `Pragma` and `Expires` are not read: a
    /// GET/HEAD response with a heuristically cacheable status is stored (shared mode still refuses
    /// credentials and responses that set a cookie, whose `public` it cannot see).
    public static func storability(
        request: CacheRequest, response: CacheResponse, mode: CacheMode, ignoreServerCacheControl: Bool = false,
        targetedFields: [String] = []
    ) -> Storability {
        if let reason = basicRefusal(request: request, response: response) { return .doNotStore(reason: reason) }
        let status = response.status
        if HeaderSyntax.varyFieldNames(response.headers) == nil {
            return .doNotStore(reason: "Vary: * — the response can never be reused (RFC 9111 §4.1)")
        }
        // URL user info is sent as Authorization: Basic, so it counts as Authorization (§3.5).
        let hasAuthorization = hasCredentials(request)
        if ignoreServerCacheControl {
            if mode == .shared, hasAuthorization {
                return .doNotStore(reason: "request has credentials (Authorization or URL user info) and a shared cache ignoring Cache-Control cannot see public (RFC 9111 §3.5)")
            }
            if mode == .shared, setsCookie(response.headers) {
                return .doNotStore(reason: "response sets a cookie (Set-Cookie) and a shared cache ignoring Cache-Control cannot see public or s-maxage (RFC 9111 §3.1, §7.3)")
            }
            guard heuristicallyCacheableStatuses.contains(status) else {
                return .doNotStore(reason: "status \(status) is not heuristically cacheable and the server's Cache-Control is ignored")
            }
            return .store
        }
        let (cc, targeted) = responseDirectives(response.headers, targets: targetedFields)
        let understood = understoodStatuses.contains(status)
        if let reason = directiveRefusal(cc, understood: understood, status: status, mode: mode, hasAuthorization: hasAuthorization,
                                         setsCookie: setsCookie(response.headers)) {
            return .doNotStore(reason: reason)
        }
        let hasExpires = !targeted && response.headers.contains("Expires")
        let explicitFreshness = cc.maxAge != nil || hasExpires || (mode == .shared && cc.sMaxAge != nil)
        if !understood {
            // RFC 9111 §3 needs the status understood only for 206, 304 and must-understand; `public` makes any
            // other status explicitly cacheable, and then heuristically fresh (§4.2.2).
            return explicitFreshness || cc.isPublic ? .store
                : .doNotStore(reason: "status \(status) is not understood by this cache and has neither explicit freshness nor public (RFC 9111 §3)")
        }
        let explicitlyCacheable = explicitFreshness || cc.isPublic || (mode == .private && cc.isPrivate)
        if explicitlyCacheable || heuristicallyCacheableStatuses.contains(status) { return .store }
        return .doNotStore(reason: "status \(status) has no explicit freshness (max-age, s-maxage, Expires, public) "
            + "and is not heuristically cacheable (RFC 9111 §3, §4.2.2)")
    }

    private static func basicRefusal(request: CacheRequest, response: CacheResponse) -> String? {
        guard isCacheableMethod(request.method) else {
            return "method \(request.method) is not cached; only GET and HEAD are (RFC 9111 §3)"
        }
        let status = response.status
        if status < 200 { return "status \(status) is not a final response (RFC 9111 §3)" }
        if status == 304 { return "304 Not Modified freshens a stored response; it is not stored itself (RFC 9111 §4.3.4)" }
        if status == 206 { return "partial content not supported (206; RFC 9111 §3.4)" }
        // Codes outside 100...599 are invalid; a client processes them as a 5xx (RFC 9110 §15), so never stored.
        if status > 599 { return "status \(status) is outside 100-599 and handled as a server error (RFC 9110 §15)" }
        if CacheControl.request(request.headers).noStore { return "request has no-store (RFC 9111 §5.2.1.5)" }
        return nil
    }

    private static func directiveRefusal(
        _ cc: CacheControl, understood: Bool, status: Int, mode: CacheMode, hasAuthorization: Bool, setsCookie: Bool
    ) -> String? {
        if cc.mustUnderstand && !understood {
            return "must-understand with status \(status), which this cache does not understand (RFC 9111 §5.2.2.3)"
        }
        if cc.noStore && !(cc.mustUnderstand && understood) { return "response has no-store (RFC 9111 §5.2.2.5)" }
        if mode == .shared {
            if cc.isPrivate { return "response is private and this is a shared cache (RFC 9111 §5.2.2.7)" }
            if hasAuthorization && !(cc.isPublic || cc.mustRevalidate || cc.sMaxAge != nil) {
                return "request has credentials (Authorization or URL user info) and the response lacks public, must-revalidate or s-maxage (RFC 9111 §3.5)"
            }
            if setsCookie && !isSharedDespiteCookie(cc) {
                return "response sets a cookie (Set-Cookie) and lacks public or s-maxage: a shared cache keeps cookies with their client (RFC 9111 §3.1, §7.3)"
            }
        }
        return nil
    }
}
