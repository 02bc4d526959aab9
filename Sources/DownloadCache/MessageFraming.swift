import Foundation
import HTTPCacheSemantics
import CacheStore
import SharedTier

/// The transport's rules for the fields that frame an HTTP/1.1 message (RFC 9110 §6.4, §7.6.1, §7.2;
/// RFC 9112 §6): every transport applies them to what a caller asks to send and to what an origin sends back,
/// so no caller field can change where one message ends and no origin can get a short or mis-framed body stored.
public enum MessageFraming {
    /// Request fields the transport writes itself (lowercased): a caller that sets one is refused, since each
    /// decides how the message is delimited or how the connection behaves (RFC 9110 §7.6.1 connection
    /// options, §6.4 / RFC 9112 §6 framing, §10.1.1 Expect, §7.8 Upgrade). `Host` is separate: see
    /// ``requestProblem(method:url:headers:)``.
    public static let transportRequestFields: Set<String> = [
        "content-length", "transfer-encoding", "connection", "upgrade", "te", "expect", "keep-alive",
        "proxy-connection", "trailer",
    ]

    /// Why a request cannot be sent as given, in words, or `nil` when it can.
    ///
    /// Refused: a method that is not an RFC 9110 §5.6.2 token; a field name that is not a token; a value with
    /// CR, LF, NUL or another control character but HTAB (RFC 9110 §5.5); any field of
    /// ``transportRequestFields`` (name case-insensitive); more than one `Host`; a `Host` that names another
    /// authority than the URL (host case-insensitive, the scheme's default port may be written or left out).
    /// A `Host` equal to the URL's authority is allowed (the transport sends its own, equal one).
    /// Decision: the cache key is the URL, so a request for another virtual host than the URL names would be
    /// stored under the wrong key; such a request is refused rather than keyed by Host.
    public static func requestProblem(method: String, url: URL, headers: HTTPHeaders) -> String? {
        guard isToken(method) else { return "method '\(printable(method))' is not an HTTP token" }
        var hosts = 0
        for field in headers {
            guard isToken(field.name) else { return "header name '\(printable(field.name))' is not an HTTP token" }
            if field.value.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }) {
                return "value of header '\(field.name)' contains CR, LF, NUL or another control character"
            }
            let name = field.name.lowercased()
            if transportRequestFields.contains(name) {
                return "header '\(field.name)' is set by the transport (message framing), not by the caller"
            }
            if name == "host" {
                hosts += 1
                if hosts > 1 { return "more than one Host header" }
                if !hostMatches(field.value, url: url) {
                    return "Host '\(field.value)' differs from the URL's authority '\(authority(of: url))'"
                        + " (the cache key is the URL; request that URL instead)"
                }
            }
        }
        return nil
    }

    /// The header fields a transport sends for `headers`: a `Host` equal to the URL's authority is left out
    /// (the transport writes its own). Call after ``requestProblem(method:url:headers:)`` returned `nil`.
    public static func sentHeaders(_ headers: HTTPHeaders) -> HTTPHeaders {
        guard headers.contains("Host") else { return headers }
        var copy = headers
        copy.remove("Host")
        return copy
    }

    /// Why a response head is framed invalidly, in words, or `nil` when its framing is sound.
    ///
    /// RFC 9112 §6.3: every `Content-Length` value (repeated fields and comma lists together) must be 1*DIGIT
    /// that fits in 63 bits, and all must be equal; a `Content-Length` together with `Transfer-Encoding` is
    /// refused as a smuggling or splitting attempt (§6.3 ¶3 "ought to be handled as an error"); the only transfer
    /// coding accepted is a single `chunked` (anything else could not be removed, §6.1), and none in an HTTP/1.0
    /// response (§6.1: faulty framing). `version` is the status line's protocol (`"HTTP/1.1"`), `nil` if unknown.
    public static func responseFramingProblem(headers: HTTPHeaders, version: String? = nil) -> String? {
        let lengths = headers.values(for: "Content-Length")
        if !lengths.isEmpty {
            var seen: Set<String> = []
            for member in lengths.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
                let text = HTTPHeaders.trimOWS(String(member))
                guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), Int64(text) != nil else {
                    return "invalid Content-Length '\(printable(lengths.joined(separator: ", ")))'"
                }
                seen.insert(String(Int64(text) ?? 0))
            }
            if seen.count > 1 { return "conflicting Content-Length values '\(printable(lengths.joined(separator: ", ")))'" }
        }
        let codings = headers.values(for: "Transfer-Encoding")
        if !codings.isEmpty {
            if !lengths.isEmpty { return "both Transfer-Encoding and Content-Length (ambiguous framing)" }
            if version == "HTTP/1.0" { return "Transfer-Encoding in an HTTP/1.0 response" }
            let members = codings.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
                .map { HTTPHeaders.trimOWS(String($0)).lowercased() }
            guard members == ["chunked"] else {
                return "unsupported Transfer-Encoding '\(printable(codings.joined(separator: ", ")))' (only chunked)"
            }
        }
        return nil
    }

    /// Why a status is an answer the request did not ask for, or `nil`: a 304 to a request without
    /// `If-None-Match` / `If-Modified-Since` (RFC 9110 §15.4.5: only a conditional GET or HEAD gets one), a 206 to
    /// a request without `Range` (§15.3.7).
    public static func unsolicitedStatusProblem(status: Int, requestHeaders: HTTPHeaders) -> String? {
        if status == 304 && !requestHeaders.contains("If-None-Match") && !requestHeaders.contains("If-Modified-Since") {
            return "unsolicited 304 Not Modified: the request carried no validator"
        }
        if status == 206 && !requestHeaders.contains("Range") {
            return "unsolicited 206 Partial Content: the request asked for no range"
        }
        return nil
    }

    /// Why a received field is unusable, or `nil`: a name or value holding CR, LF or NUL (RFC 9110 §5.5: such a
    /// message is rejected). A bare CR inside a line is one field to this parser and a line break to others, so
    /// a stored value like `no-store\rmax-age=600` would be read differently by each recipient of the answer.
    public static func responseFieldProblem(headers: HTTPHeaders) -> String? {
        for field in headers {
            let bad: (Unicode.Scalar) -> Bool = { $0 == "\r" || $0 == "\n" || $0 == "\0" }
            if field.name.unicodeScalars.contains(where: bad) || field.value.unicodeScalars.contains(where: bad) {
                return "header field '\(printable(field.name))' contains CR, LF or NUL"
            }
        }
        return nil
    }

    /// Every check of a received response head: field syntax, framing, then the status against the request.
    static func responseProblem(status: Int, headers: HTTPHeaders, version: String?,
                                request: TransportRequest) -> String? {
        responseFieldProblem(headers: headers)
            ?? responseFramingProblem(headers: headers, version: version)
            ?? unsolicitedStatusProblem(status: status, requestHeaders: request.headers)
    }

    /// Whether a `Host` value names the URL's authority: same host (ASCII case-insensitive), same port, where
    /// an absent port means the scheme's default (80 for http, 443 for https).
    static func hostMatches(_ value: String, url: URL) -> Bool {
        let text = HTTPHeaders.trimOWS(value).lowercased()
        guard let urlHost = url.host?.lowercased(), !text.isEmpty else { return false }
        let defaultPort = url.scheme?.lowercased() == "https" ? 443 : 80
        let urlPort = url.port ?? defaultPort
        var host = Substring(text)
        var port = defaultPort
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let parsed = Int(rest.dropFirst()), (1...65_535).contains(parsed) else {
                    return false
                }
                port = parsed
            }
        } else if let colon = host.lastIndex(of: ":") {
            let digits = host[host.index(after: colon)...]
            guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let parsed = Int(digits),
                  (1...65_535).contains(parsed) else { return false }
            port = parsed
            host = host[..<colon]
        }
        let bareURLHost = urlHost.hasPrefix("[") ? String(urlHost.dropFirst().dropLast()) : urlHost
        return host == bareURLHost && port == urlPort
    }

    /// `host[:port]` of `url` as a Host header would say it.
    static func authority(of url: URL) -> String {
        let host = url.host ?? ""
        return url.port.map { "\(host):\($0)" } ?? host
    }

    /// RFC 9110 §5.6.2 `tchar`.
    private static let tokenBytes: Set<UInt8> = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    /// Whether `text` is a non-empty RFC 9110 token.
    public static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { tokenBytes.contains($0) }
    }

    /// `text` with control characters escaped (`\r`, `\n`, `\u{0}` ...) so a message stays one line.
    static func printable(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars.prefix(200) {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                result += scalar.escaped(asASCII: true)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
