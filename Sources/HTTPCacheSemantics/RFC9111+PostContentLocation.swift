import Foundation

extension RFC9111 {
    /// Whether the response to a POST may be stored as the response to a later GET of the same URI (RFC 9110
    /// §9.3.3, RFC 9111 §4): a 2xx with explicit freshness (`max-age`, `Expires`, or `s-maxage` in a shared
    /// cache) and a `Content-Location` that resolves to the POST's own target URI (compared as normalised URIs).
    ///
    /// The usual storability rules (no-store, private in a shared cache …) still apply to that GET-shaped request.
    public static func postResponseAnswersGET(request: CacheRequest, response: CacheResponse, mode: CacheMode) -> Bool {
        guard request.method == "POST", (200...299).contains(response.status), response.status != 206,
              let location = response.headers.first("Content-Location"),
              let resolved = URL(string: HTTPHeaders.trimOWS(location), relativeTo: request.url)?.absoluteURL,
              normalizedURI(resolved) == normalizedURI(request.url) else { return false }
        let cc = CacheControl.response(response.headers)
        return cc.maxAge != nil || (mode == .shared && cc.sMaxAge != nil) || response.headers.contains("Expires")
    }
}
