import Foundation

extension RFC9111 {
    /// The primary keys an unsafe request's response invalidates (RFC 9111 §4.4); empty when nothing is.
    ///
    /// Only for a method that is not safe (anything but GET, HEAD, OPTIONS, TRACE) and a non-error status
    /// (2xx or 3xx). Invalidated: the target URI, and the URIs in `Location` and `Content-Location` (resolved
    /// against the target) when they have the same origin (scheme, host, port). Each URI yields its GET and HEAD
    /// keys; the list is de-duplicated, in that order.
    public static func invalidatedKeys(request: CacheRequest, response: CacheResponse) -> [String] {
        guard !isSafeMethod(request.method), (200...399).contains(response.status) else { return [] }
        var uris: [URL] = [request.url]
        for name in ["Location", "Content-Location"] {
            guard let value = response.headers.first(name), !value.isEmpty,
                  let resolved = URL(string: value, relativeTo: request.url)?.absoluteURL,
                  sameOrigin(resolved, request.url) else { continue }
            uris.append(resolved)
        }
        var keys: [String] = []
        for uri in uris {
            for method in ["GET", "HEAD"] {
                let key = primaryKey(method: method, url: uri)
                if !keys.contains(key) { keys.append(key) }
            }
        }
        return keys
    }

    /// The reason given for the answer to an unsafe request that is not stored as a GET response: why it is not
    /// stored (RFC 9111 §3, RFC 9110 §9.3.3) and what it invalidated (RFC 9111 §4.4, ``invalidatedKeys(request:response:)``).
    /// E.g. `POST response not stored (RFC 9111 §3: only a POST response with explicit freshness and
    /// Content-Location = its URI is reusable, RFC 9110 §9.3.3); the stored responses of 1 URI invalidated (RFC 9111 §4.4)`.
    public static func unsafeMethodReason(request: CacheRequest, response: CacheResponse) -> String {
        let method = request.method.uppercased()
        let notStored = method == "POST"
            ? "POST response not stored (RFC 9111 §3: only a POST response with explicit freshness and Content-Location = its URI is reusable, RFC 9110 §9.3.3)"
            : "\(method) response not stored (RFC 9111 §3: the method is not cacheable)"
        guard !isSafeMethod(request.method) else { return notStored }
        guard (200...399).contains(response.status) else {
            return notStored + "; nothing invalidated: status \(response.status) is an error (RFC 9111 §4.4)"
        }
        let uris = invalidatedKeys(request: request, response: response).count / 2
        return notStored + "; the stored responses of \(uris) URI\(uris == 1 ? "" : "s") invalidated (RFC 9111 §4.4)"
    }

    /// Whether two URLs share an origin (RFC 6454): scheme, host (case-insensitive) and effective port.
    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        guard let ca = URLComponents(url: a, resolvingAgainstBaseURL: true),
              let cb = URLComponents(url: b, resolvingAgainstBaseURL: true),
              let sa = ca.scheme?.lowercased(), let sb = cb.scheme?.lowercased(), sa == sb,
              let ha = ca.host?.lowercased(), let hb = cb.host?.lowercased(), ha == hb else { return false }
        return effectivePort(ca.port, scheme: sa) == effectivePort(cb.port, scheme: sb)
    }

    private static func effectivePort(_ port: Int?, scheme: String) -> Int? {
        if let port { return port }
        switch scheme {
        case "http": return 80
        case "https": return 443
        default: return nil
        }
    }

    /// `headers` without the fields a qualified `no-cache="…"` names (RFC 9111 §5.2.2.4): what a response may
    /// carry when it satisfies a request it was not validated for — a stored response served without
    /// revalidation, or another caller's exchange handed to a coalesced waiter (a `Set-Cookie` meant for that
    /// caller). Unchanged when `no-cache` is absent or unqualified.
    public static func removingNoCacheFields(_ headers: HTTPHeaders) -> HTTPHeaders {
        let named = Set(CacheControl.response(headers).noCacheFields)
        guard !named.isEmpty else { return headers }
        return HTTPHeaders(fields: headers.fields.filter { !named.contains($0.name.lowercased()) })
    }

    /// The header fields to serve with a stored response (RFC 9111 §5.1, §3.1, §5.2.2.4).
    ///
    /// Sets `Age` to the whole seconds of ``currentAge(_:now:)``; removes hop-by-hop and Connection-named fields;
    /// unless `revalidated` (the response was just validated with the origin), removes the fields named by a
    /// qualified `no-cache="…"`, which may only be served after validation. `stored` is the response as this
    /// cache may serve it: a shared cache passes only what ``storedResponseForServing(_:mode:targetedFields:)``
    /// returned, which holds no ``perClientResponseFields`` (§3.1, §7.3).
    public static func responseHeadersForServing(_ stored: StoredResponse, now: Date, revalidated: Bool = false) -> HTTPHeaders {
        var headers = stored.response.headers
        let drop = hopByHopFields.union(connectionNamedFields(headers))
        var fields = headers.fields.filter { !drop.contains($0.name.lowercased()) }
        if !revalidated {
            let noCacheFields = Set(CacheControl.response(headers).noCacheFields)
            fields.removeAll { noCacheFields.contains($0.name.lowercased()) }
        }
        headers = HTTPHeaders(fields: fields)
        let age = currentAge(stored, now: now)
        // Whole seconds, rounded down; a millisecond of tolerance keeps an age that lost precision in a
        // Date round trip (39.9999999 for 40 s) from reading one second low.
        let whole = age.isFinite ? min(Double(HeaderSyntax.deltaSecondsCeiling), max(0, (age + 0.001).rounded(.down))) : 0
        headers.set("Age", String(Int(whole)))
        return headers
    }
}
