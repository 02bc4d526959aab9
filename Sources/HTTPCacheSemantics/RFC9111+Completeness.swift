import Foundation

extension RFC9111 {
    /// Whether a response to `method` with `status` has content (RFC 9110 §6.4.1): not a response to HEAD,
    /// not 1xx, 204 or 304, and not a 2xx answer to CONNECT (the connection becomes a tunnel). Methods are
    /// compared case-insensitively.
    public static func responseHasContent(method: String, status: Int) -> Bool {
        let method = method.uppercased()
        if method == "HEAD" || (100..<200).contains(status) || status == 204 || status == 304 { return false }
        if method == "CONNECT" && (200..<300).contains(status) { return false }
        return true
    }

    /// The content length in bytes that `response` to `method` announces (RFC 9110 §8.6): its `Content-Length`
    /// when the response has content (``responseHasContent(method:status:)``) and every `Content-Length` value
    /// (repeated fields and list members together) is the same 1*DIGIT number that fits in 63 bits; `nil` when
    /// the response has no content, no `Content-Length`, or an unusable one.
    public static func announcedContentLength(method: String, response: CacheResponse) -> Int64? {
        guard responseHasContent(method: method, status: response.status) else { return nil }
        var length: Int64?
        for value in response.headers.values(for: "Content-Length") {
            for member in HeaderSyntax.listMembers(value) {
                guard !member.isEmpty, member.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
                      let parsed = Int64(member) else { return nil }
                if let length, length != parsed { return nil }
                length = parsed
            }
        }
        return length
    }

    /// Whether `receivedBodyBytes` (bytes) are the complete content of `response` to `method` (RFC 9111 §3.3):
    /// `false` when the response announces a length (``announcedContentLength(method:response:)``) that differs
    /// — fewer bytes were cut off, more cannot belong to the announced content. Without an announced length
    /// completeness is assumed (the transport reports a cut-off chunked body itself).
    ///
    /// An incomplete response must not be stored as complete; this cache does not store partial responses.
    public static func isComplete(method: String, response: CacheResponse, receivedBodyBytes: Int64) -> Bool {
        guard let expected = announcedContentLength(method: method, response: response) else { return true }
        return receivedBodyBytes == expected
    }
}
