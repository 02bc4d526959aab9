import Foundation

extension RFC9111 {
    /// Fields a generated 304 carries (RFC 9110 §15.4.5): those a 200 would have sent among Content-Location,
    /// Date, ETag, Vary, Cache-Control and Expires, plus the cache's `Age`.
    static let notModifiedFields: Set<String> = ["cache-control", "content-location", "date", "etag", "expires", "vary", "age"]

    /// Whether the cache answers the client's own preconditions with 304 Not Modified from `stored` (RFC 9111
    /// §4.3.2) instead of the full stored response.
    ///
    /// Only for a stored 2xx other than 206 (RFC 9110 §13.2.1: preconditions are ignored when the unconditional
    /// answer would not be 2xx). `If-None-Match` takes precedence and uses weak comparison (`*` matches any);
    /// otherwise a valid `If-Modified-Since` not earlier than the stored `Last-Modified` (else `Date`, else
    /// `response_time`) matches. `false` when the request carries no precondition or it does not match.
    public static func answersNotModified(request: CacheRequest, stored: StoredResponse) -> Bool {
        let status = stored.response.status
        guard (200...299).contains(status), status != 206 else { return false }
        return isNotModified(request: request, stored: stored) == true
    }

    /// The header fields of the 304 the cache generates from `stored` at `now` (RFC 9110 §15.4.5, RFC 9111 §4.3.2).
    ///
    /// The serving headers (``responseHeadersForServing(_:now:revalidated:)``, with `Age`) reduced to
    /// Cache-Control, Content-Location, Date, ETag, Expires, Vary and Age; `Last-Modified` is kept when there is no
    /// `ETag`, since it is then the validator the client will send next. Representation metadata such as
    /// Content-Type and Content-Length is left out.
    public static func notModifiedHeaders(_ stored: StoredResponse, now: Date, revalidated: Bool = false) -> HTTPHeaders {
        let served = responseHeadersForServing(stored, now: now, revalidated: revalidated)
        let keepLastModified = !served.contains("ETag")
        return HTTPHeaders(fields: served.fields.filter { field in
            let name = field.name.lowercased()
            return notModifiedFields.contains(name) || (keepLastModified && name == "last-modified")
        })
    }
}
