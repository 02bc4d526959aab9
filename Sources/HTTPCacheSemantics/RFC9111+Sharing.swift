import Foundation

extension RFC9111 {
    /// Request fields whose values are secrets: never kept in plaintext in a stored key, never sent to another
    /// origin on a redirect (lower-cased).
    public static let credentialFields: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// Whether `request` carries credentials in the sense of RFC 9111 §3.5: an `Authorization` field, or user
    /// info in its URL (`http://user:password@host/`), which HTTP clients send as `Authorization: Basic`.
    ///
    /// Any `@` in the authority counts, also an empty user or password (`http://:@host/`, `http://user@host/`).
    public static func hasCredentials(_ request: CacheRequest) -> Bool {
        request.headers.contains("Authorization") || userInfo(of: request.url) != nil
    }

    /// The user info of an absolute URI (the text before the last `@` of its authority, RFC 3986 §3.2.1), as
    /// written (percent-encoding kept); `nil` when the authority has no `@`.
    static func userInfo(of url: URL) -> Substring? {
        let text = url.absoluteString
        let utf8 = text.utf8
        guard let colon = utf8.firstIndex(of: 0x3A), text[colon...].hasPrefix("://") else { return nil }
        let start = utf8.index(colon, offsetBy: 3)
        let end = utf8[start...].firstIndex { $0 == 0x2F || $0 == 0x3F || $0 == 0x23 } ?? utf8.endIndex
        guard let at = utf8[start..<end].lastIndex(of: 0x40) else { return nil }
        return text[start..<at]
    }

    /// The keyed tag of the credentials `request` carries (its `Authorization` values and URL user info), or
    /// `nil` when it carries none (RFC 9111 §3.5).
    ///
    /// Two requests get the same tag exactly when they present byte-equal credentials; the tag is
    /// ``CacheKeySecret/tag(_:)`` of both parts, so it can be stored without revealing them. Without a hash
    /// (``CacheKeySecret/none``) it is ``CacheKeySecret/unavailableTag``, which no request matches.
    public static func credentialTag(_ request: CacheRequest, secret: CacheKeySecret) -> String? {
        let authorization = request.headers.values(for: "Authorization")
        let user = userInfo(of: request.url)
        guard !authorization.isEmpty || user != nil else { return nil }
        let authorizationText = authorization.isEmpty ? "-" : "+" + normalizedValue(authorization)
        let userText = user.map { "+" + $0 } ?? "-"
        // Length-prefixed so that no two different pairs give the same input.
        return secret.storedTag("credentials\n\(authorizationText.utf8.count):\(authorizationText)\n\(userText.utf8.count):\(userText)")
    }

    /// Whether the origin let a response to a request with credentials be reused for other requests (RFC 9111
    /// §3.5): `public`, `s-maxage` or `must-revalidate`; never when the server's Cache-Control is ignored.
    static func isSharedDespiteCredentials(_ response: CacheResponse, ignoreServerCacheControl: Bool) -> Bool {
        guard !ignoreServerCacheControl else { return false }
        let cc = CacheControl.response(response.headers)
        return cc.isPublic || cc.sMaxAge != nil || cc.mustRevalidate
    }

    /// The partition of requests without credentials (``StoredResponse/credentialPartition``).
    public static let anonymousPartition = "anonymous"

    /// The partition a request belongs to: its ``credentialTag(_:secret:)``, or ``anonymousPartition``.
    static func requestPartition(_ request: CacheRequest, secret: CacheKeySecret) -> String {
        credentialTag(request, secret: secret) ?? anonymousPartition
    }

    /// The credential partition to store with `response` (``StoredResponse/credentialPartition``): `nil` (any
    /// request) when the origin made it shareable despite credentials (§3.5: `public`, `s-maxage`,
    /// `must-revalidate`), else the request's partition: its ``credentialTag(_:secret:)``, or
    /// ``anonymousPartition`` for a request without credentials.
    ///
    /// So in both cache modes a response obtained with credentials is served only to requests presenting the same
    /// credentials, and an anonymous one only to anonymous requests (in shared mode a response to credentials is
    /// not stored at all unless shareable, see ``storability(request:response:mode:ignoreServerCacheControl:)``).
    public static func credentialPartition(request: CacheRequest, response: CacheResponse,
                                           options: EvaluationOptions) -> String? {
        if isSharedDespiteCredentials(response, ignoreServerCacheControl: options.ignoreServerCacheControl) { return nil }
        return requestPartition(request, secret: options.keySecret)
    }

    /// The store's variant key: the secondary key (§4.1) plus, for a response partitioned by credentials, a line
    /// naming the partition, so responses for different credentials are stored side by side (anonymous and
    /// shareable responses add nothing).
    ///
    /// The partition line starts with a space, which no escaped field name of a secondary key can.
    public static func variantKey(secondaryKey: String, credentialPartition: String?) -> String {
        guard let credentialPartition, credentialPartition != anonymousPartition else { return secondaryKey }
        return secondaryKey + "\n credentials:" + credentialPartition
    }

    /// Whether a response the origin gave to `request` may also be handed to `other`, an identical request of
    /// another caller waiting on the same exchange (coalescing): only when the cache may store it (§3) and the
    /// stored response would be served to `other` (§4.1 secondary key, §3.5 credentials).
    ///
    /// A `no-store` or (in a shared cache) `private` response, or one to a request with credentials the other
    /// request does not present, is never handed on: each waiter then makes its own request.
    public static func mayShare(response: CacheResponse, obtainedFor request: CacheRequest, with other: CacheRequest,
                                options: EvaluationOptions) -> Bool {
        guard storability(request: request, response: response, mode: options.mode,
                          ignoreServerCacheControl: options.ignoreServerCacheControl,
                          targetedFields: options.targetedFields).isStorable else { return false }
        let stored = makeStoredResponse(request: request, response: response, requestTime: Date(timeIntervalSince1970: 0),
                                        responseTime: Date(timeIntervalSince1970: 0), options: options)
        return mismatchReason(stored: stored, request: other, secret: options.keySecret) == nil
    }

    /// The request header fields for the next hop of a redirect from `from` to `to`: unchanged within one origin
    /// (scheme, host, port — RFC 6454); without ``credentialFields`` (Authorization, Proxy-Authorization,
    /// Cookie) when the origin changes, including an https → http downgrade on the same host (as curl and
    /// browsers do, RFC 9110 §15.4).
    public static func redirectHeaders(_ headers: HTTPHeaders, from: URL, to: URL) -> HTTPHeaders {
        if sameOrigin(from, to) { return headers }
        return HTTPHeaders(fields: headers.fields.filter { !isCredentialField($0.name) })
    }

    /// Whether `name` is one of ``credentialFields``, ignoring ASCII case and surrounding whitespace.
    static func isCredentialField(_ name: String) -> Bool {
        credentialFields.contains(HeaderSyntax.asciiLowercased(HTTPHeaders.trimOWS(Substring(name))))
    }

    /// Fields a cache relies on for its own decisions; kept even when a response's `Connection` names them
    /// (RFC 9110 §7.6.1 forbids naming end-to-end fields there), lower-cased.
    static let fieldsKeptDespiteConnection: Set<String> = [
        "cache-control", "pragma", "expires", "vary", "date", "age", "etag", "last-modified",
        "content-length", "content-encoding", "content-range",
    ]

    /// The response header fields to store (RFC 9111 §3.1): without hop-by-hop fields (``hopByHopFields``:
    /// Connection, Proxy-Connection, Keep-Alive, TE, Transfer-Encoding, Upgrade, Trailer, proxy credentials),
    /// `Proxy-Authentication-Info`, and the fields the response's `Connection` names (except the caching fields
    /// the cache itself reads, ``fieldsKeptDespiteConnection``). Names compare case-insensitively.
    public static func storedHeaders(_ headers: HTTPHeaders) -> HTTPHeaders {
        let named = connectionNamedFields(headers).subtracting(fieldsKeptDespiteConnection)
        let drop = hopByHopFields.union(named).union(["proxy-authentication-info"])
        return HTTPHeaders(fields: headers.fields.filter { !drop.contains($0.name.lowercased()) })
    }
}

// MARK: - Per-client response fields (cookies)

extension RFC9111 {
    /// Response fields addressed to the one client that made the request (lower-cased): `Set-Cookie` (and the
    /// obsolete `Set-Cookie2`). A cookie is state of one user agent (RFC 6265 §3); a shared cache that stored it
    /// or handed it to another client would give that client someone else's session (RFC 9111 §7.3 leaves it to
    /// the cache to keep them apart).
    public static let perClientResponseFields: Set<String> = ["set-cookie", "set-cookie2"]

    /// Whether `headers` carry a ``perClientResponseFields`` field (a response that sets a cookie).
    public static func setsCookie(_ headers: HTTPHeaders) -> Bool {
        headers.fields.contains(where: isPerClientField)
    }

    /// Whether `field` is one of ``perClientResponseFields`` (ASCII case-insensitive; names of any other
    /// length are rejected before they are lower-cased).
    static func isPerClientField(_ field: HTTPHeaders.Field) -> Bool {
        let length = field.name.utf8.count
        return (length == 10 || length == 11) && perClientResponseFields.contains(field.name.lowercased())
    }

    /// The stored response as a shared cache may serve it to any of its clients, or `nil` when it may serve it
    /// to none (RFC 9111 §3.1, §5.2.2.7, §7.3). A namespace may hold responses a private cache stored (or a
    /// build that stored cookies): one that is `private`, or sets a cookie without `public` or `s-maxage`
    /// (``isSharedDespiteCookie(_:)``), would not have been stored by a shared cache, so it is never served by
    /// one (the caller treats it as a miss and leaves it stored); any other is served without the
    /// ``perClientResponseFields``. A private cache serves `stored` unchanged. The directives are read as
    /// ``storability(request:response:mode:ignoreServerCacheControl:targetedFields:)`` reads them: from the first
    /// valid field of `targetedFields` (RFC 9213) when there is one, else from `Cache-Control`.
    public static func storedResponseForServing(_ stored: StoredResponse, mode: CacheMode,
                                                targetedFields: [String] = []) -> StoredResponse? {
        guard mode == .shared else { return stored }
        let cookie = setsCookie(stored.response.headers)
        let cc = responseDirectives(stored.response.headers, targets: targetedFields).cacheControl
        if cc.isPrivate || (cookie && !isSharedDespiteCookie(cc)) { return nil }
        guard cookie else { return stored }
        var served = stored
        served.response.headers = withoutPerClientFields(stored.response.headers)
        return served
    }

    /// `headers` without the ``perClientResponseFields`` (names compared case-insensitively); the other fields
    /// keep their order.
    public static func withoutPerClientFields(_ headers: HTTPHeaders) -> HTTPHeaders {
        guard setsCookie(headers) else { return headers }
        return HTTPHeaders(fields: headers.fields.filter { !isPerClientField($0) })
    }

    /// The header fields another client may receive of a response obtained for one client (a coalesced waiter,
    /// RFC 9111 §4 "collapsed requests"): without the fields a qualified `no-cache="…"` names (§5.2.2.4), and in a
    /// shared cache without the ``perClientResponseFields`` (§3.1, §7.3). A private cache serves one user, so
    /// there the cookie stays.
    public static func headersForAnotherClient(_ headers: HTTPHeaders, mode: CacheMode) -> HTTPHeaders {
        let shared = removingNoCacheFields(headers)
        return mode == .shared ? withoutPerClientFields(shared) : shared
    }

    /// The header fields for the client whose conditional request got `notModified` (a 304, RFC 9111 §4.3.4,
    /// or the 206 that completed a resumed transfer, §3.4), served from the freshened or combined stored response
    /// `served`: in a shared cache the stored response holds no ``perClientResponseFields``, so the answer's own
    /// (a `Set-Cookie` sent to this client) are added to `served`. A private cache stored them while freshening:
    /// `served` unchanged.
    public static func headersForTheRevalidatingClient(_ served: HTTPHeaders, notModified: HTTPHeaders,
                                                       mode: CacheMode) -> HTTPHeaders {
        guard mode == .shared, setsCookie(notModified) else { return served }
        let cookies = notModified.fields.filter(isPerClientField)
        return HTTPHeaders(fields: withoutPerClientFields(served).fields + cookies)
    }

    /// Whether a shared cache may store a response that sets a cookie: only when the origin said it is for
    /// everyone (`public` or `s-maxage`, RFC 9111 §5.2.2.9, §5.2.2.10); the stored copy then has no
    /// ``perClientResponseFields``. (With the server's Cache-Control ignored the directives cannot be seen, so
    /// ``storability(request:response:mode:ignoreServerCacheControl:targetedFields:)`` refuses such a response.)
    static func isSharedDespiteCookie(_ cc: CacheControl) -> Bool {
        cc.isPublic || cc.sMaxAge != nil
    }
}
