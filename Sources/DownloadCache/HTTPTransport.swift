import Foundation
import HTTPCacheSemantics
import CacheStore
import SharedTier

/// One request as the transport sends it: method, absolute URL, header fields, optional request body.
public struct TransportRequest: Sendable, Hashable {
    /// The request method, e.g. `"GET"`, `"HEAD"`, `"POST"` (case kept as given).
    public var method: String
    /// The absolute target URL (http or https).
    public var url: URL
    /// Request header fields sent as given (names case-insensitive).
    public var headers: HTTPHeaders
    /// The request content for unsafe methods; `nil` sends none.
    public var body: Data?
    /// Total time allowed for the exchange, in seconds; `nil` uses the transport's default idle timeout.
    public var timeout: TimeInterval?
    /// Whether the transport may follow 3xx redirects itself; the cache client always passes `false` and
    /// follows them hop by hop so each hop is cached under its own key.
    public var followRedirects: Bool
    /// When a slow exchange fails as stalled (``TransportError/stalled(minimumBytes:seconds:)``); `nil` = never
    /// (only `timeout` and the transport's idle timeout bound it). Default ``StallRule/default``.
    public var stallRule: StallRule?
    /// The most body bytes per second to receive (``RequestOptions/maxReceiveBytesPerSecond``); `nil` = unlimited.
    /// ``CurlTransport`` paces the transfer with libcurl's `CURLOPT_MAX_RECV_SPEED_LARGE`; URLSession ignores it.
    public var maxReceiveBytesPerSecond: Int64?

    /// Creates a request; see the properties for units and defaults.
    public init(method: String = "GET", url: URL, headers: HTTPHeaders = HTTPHeaders(), body: Data? = nil,
                timeout: TimeInterval? = nil, followRedirects: Bool = false, stallRule: StallRule? = .default) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.followRedirects = followRedirects
        self.stallRule = stallRule
    }
}

/// A 1xx interim response (RFC 9110 §15.2) received before the final response: never stored, its fields never
/// merged into the final response's (RFC 9111 §3: only final responses are cached).
public struct InterimResponse: Sendable, Hashable {
    /// At most this many interim responses are kept per exchange (later ones are dropped).
    public static let maximumKept = 16
    /// The status code, 100–199 (e.g. 103 Early Hints).
    public var status: Int
    /// Its header fields as received.
    public var headers: HTTPHeaders

    /// Creates an interim response value.
    public init(status: Int, headers: HTTPHeaders) {
        self.status = status
        self.headers = headers
    }
}

/// The stall rule: an exchange fails as stalled when fewer than ``minimumBytes`` arrive (or are sent) within a
/// window of ``seconds``; windows follow each other from the start of the exchange.
///
/// It bounds an origin that trickles a body (1 byte a second passes libcurl's idle check forever): with the
/// default, fewer than 1 KiB in 30 s fails, so a body arriving at 1 byte per second fails within 45 s.
public struct StallRule: Sendable, Hashable {
    /// Bytes (response head, body and request content together) that must move in every window; 0 never stalls.
    public var minimumBytes: Int64
    /// Length of one window, in seconds (> 0).
    public var seconds: TimeInterval

    /// Creates a rule: fail when fewer than `minimumBytes` move in `seconds`.
    public init(minimumBytes: Int64, seconds: TimeInterval) {
        self.minimumBytes = minimumBytes
        self.seconds = seconds
    }

    /// Creates a rule from a `Duration` window.
    public init(minimumBytes: Int64, within window: Duration) {
        let parts = window.components
        self.init(minimumBytes: minimumBytes, seconds: Double(parts.seconds) + Double(parts.attoseconds) / 1e18)
    }

    /// Fewer than 1 KiB (1024 bytes) in 30 seconds.
    public static let `default` = StallRule(minimumBytes: 1024, seconds: 30)

    /// Whether the rule can ever fire (a positive byte count and a positive, finite window).
    var isActive: Bool { minimumBytes > 0 && seconds > 0 && seconds.isFinite }
}

/// A complete response as the transport received it; the body is in the file the caller named.
public struct TransportResponse: Sendable, Hashable {
    /// The URL that answered (the request URL unless the transport followed redirects).
    public var url: URL
    /// The status code, e.g. 200, 304.
    public var status: Int
    /// The reason phrase for `status` (e.g. "OK"); HTTP/1.1 reason phrases are not exposed by URLSession.
    public var statusText: String
    /// The response header fields, corrected so they never contradict the body in the file: when the
    /// transport decoded a content coding (libcurl's gzip trap), `Content-Encoding` is removed and
    /// `Content-Length` is the decoded size in bytes.
    public var headers: HTTPHeaders
    /// Number of body bytes written to the body file.
    public var bodySize: Int64
    /// The content coding the transport removed (e.g. `"gzip"`), or `nil` when the body is as sent.
    public var decodedContentEncoding: String?
    /// The body in memory when the transport received it that way (small bodies); then the body file may be
    /// left empty. `nil` means the body is in the body file.
    public var inMemoryBody: Data?
    /// The 1xx interim responses that preceded this one, in order (empty for most exchanges; URLSession does not
    /// expose them).
    public var interimResponses: [InterimResponse] = []

    /// Creates a response value (used by transports and by test fakes).
    public init(url: URL, status: Int, statusText: String? = nil, headers: HTTPHeaders, bodySize: Int64,
                decodedContentEncoding: String? = nil, inMemoryBody: Data? = nil) {
        self.inMemoryBody = inMemoryBody
        self.url = url
        self.status = status
        self.statusText = statusText ?? HTTPStatusText.text(for: status)
        self.headers = headers
        self.bodySize = bodySize
        self.decodedContentEncoding = decodedContentEncoding
    }
}

/// The final response head as the transport received it, reported through ``TransportEvents/head`` before the
/// body arrives: what a caller needs to act on a response early (record a validator, start writing output).
public struct TransportResponseHead: Sendable, Hashable {
    /// The URL that answered (the request URL unless the transport followed redirects).
    public var url: URL
    /// The status code, e.g. 200, 206, 304.
    public var status: Int
    /// The reason phrase for `status` (as ``TransportResponse/statusText``).
    public var statusText: String
    /// The response header fields (names case-insensitive), as ``TransportResponse/headers`` will be, except when
    /// the transport decodes a content coding (``decodedContentEncoding`` not `nil`): then `Content-Encoding` is
    /// removed and `Content-Length` is absent, since the decoded size is known only at the end.
    public var headers: HTTPHeaders
    /// The content coding the transport will remove from the body (e.g. `"gzip"`), or `nil`.
    public var decodedContentEncoding: String?
    /// The 1xx interim responses that preceded this head, in order.
    public var interimResponses: [InterimResponse]

    /// Creates a head value (used by transports and by test fakes).
    public init(url: URL, status: Int, statusText: String? = nil, headers: HTTPHeaders,
                decodedContentEncoding: String? = nil, interimResponses: [InterimResponse] = []) {
        self.url = url
        self.status = status
        self.statusText = statusText ?? HTTPStatusText.text(for: status)
        self.headers = headers
        self.decodedContentEncoding = decodedContentEncoding
        self.interimResponses = interimResponses
    }
}

/// What a transport reports while one exchange runs, in this order: the final response ``head`` once, then
/// ``progress`` as body bytes arrive. Both run on the transport's own thread (keep them short, never block).
public struct TransportEvents: Sendable {
    /// Called at most once per exchange, when the final (non-1xx) response head has been received and its framing
    /// accepted, before any body byte is written to the body file and before the first ``progress`` call. On
    /// success it has always been called before `send` returns; on failure it was called only if a head arrived.
    /// A redirect the transport follows itself (``TransportRequest/followRedirects``) is not reported.
    public var head: (@Sendable (TransportResponseHead) -> Void)?
    /// Called with (body bytes received so far, bytes expected or `nil` when unknown) as the body arrives.
    public var progress: (@Sendable (Int64, Int64?) -> Void)?

    /// Creates the callbacks; `nil` ones are not reported.
    public init(head: (@Sendable (TransportResponseHead) -> Void)? = nil,
                progress: (@Sendable (Int64, Int64?) -> Void)? = nil) {
        self.head = head
        self.progress = progress
    }
}

extension TransportResponse {
    /// This response's head (as ``TransportEvents/head`` reports it, with the final `headers`).
    public var head: TransportResponseHead {
        TransportResponseHead(url: url, status: status, statusText: statusText, headers: headers,
                              decodedContentEncoding: decodedContentEncoding, interimResponses: interimResponses)
    }
}

/// Why a transport exchange failed, classified so the client can tell "origin unreachable" (offline
/// fallback, RFC 9111 §4.2.4 / stale-if-error) from other failures.
///
/// A struct with a ``Code`` rather than an enum with payloads, so classes can be added without breaking a caller's
/// `switch` (like ``DownloadError/Code``): switch over ``code`` (with a `default`), read the values a class carries
/// from ``detail``, ``isCertificateProblem``, ``expectedBytes``, ``receivedBytes`` and ``stallRule``. A transport
/// creates one with the static functions named after the classes (`.connectionFailed("refused")`, `.timedOut`).
public struct TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The failure classes. Compare with `==` or match with `case`; a `switch` needs a `default`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: Sendable, Hashable {
            case connectionFailed, nameNotResolved, tlsFailed, timedOut, cancelled, truncated, truncatedChunked
            case stalled, invalidRequest, invalidResponse, bodyTooLarge, other
        }

        private let kind: Kind

        private init(_ kind: Kind) {
            self.kind = kind
        }

        /// The origin could not be reached or dropped the connection before a response: refused, no route,
        /// connection lost before the status line.
        public static let connectionFailed = Code(.connectionFailed)
        /// The origin's host name could not be resolved (DNS). An unreachable origin like ``connectionFailed``;
        /// kept apart so a caller can tell a wrong name from a refused connection.
        public static let nameNotResolved = Code(.nameNotResolved)
        /// The TLS handshake failed (``TransportError/isCertificateProblem`` tells a certificate that was not
        /// trusted from any other handshake failure). Never retried over plain HTTP.
        public static let tlsFailed = Code(.tlsFailed)
        /// No progress within the timeout (idle timeout or the request's total `timeout`).
        public static let timedOut = Code(.timedOut)
        /// The exchange was cancelled by the caller.
        public static let cancelled = Code(.cancelled)
        /// The body ended before its announced length, or (length not announced, not chunked) by a connection
        /// failure. Never stored.
        public static let truncated = Code(.truncated)
        /// A chunked body ended before its last chunk. Never stored.
        public static let truncatedChunked = Code(.truncatedChunked)
        /// Fewer bytes moved in a window than the request's ``StallRule`` asks for. Never stored.
        public static let stalled = Code(.stalled)
        /// The caller asked for something the transport refuses to send (a framing field such as
        /// Content-Length, a Host naming another authority, CR/LF in a field ...). Nothing was sent.
        public static let invalidRequest = Code(.invalidRequest)
        /// The origin broke HTTP's rules (an invalid or conflicting Content-Length, Transfer-Encoding with
        /// Content-Length, an unsolicited 304 or 206, a header too large ...). Never stored.
        public static let invalidResponse = Code(.invalidResponse)
        /// The body outgrew the bytes one transfer may write to the cache's disk
        /// (`DownloadCache.Configuration.maxTransferBytes`, in ``TransportError/byteLimit``), e.g. an endless
        /// body; the transfer was stopped there. Never stored.
        public static let bodyTooLarge = Code(.bodyTooLarge)
        /// Any other failure (bad URL, unwritable body file ...).
        public static let other = Code(.other)

        /// The class in words: `connection failed`, `cannot resolve host`, `TLS failed`, `timed out`, `cancelled`,
        /// `truncated body`, `stalled`, `invalid request`, `invalid response from the origin`, `body too large`,
        /// `failed`.
        public var description: String {
            switch kind {
            case .connectionFailed: return "connection failed"
            case .nameNotResolved: return "cannot resolve host"
            case .tlsFailed: return "TLS failed"
            case .timedOut: return "timed out"
            case .cancelled: return "cancelled"
            case .truncated, .truncatedChunked: return "truncated body"
            case .stalled: return "stalled"
            case .invalidRequest: return "invalid request"
            case .invalidResponse: return "invalid response from the origin"
            case .bodyTooLarge: return "body too large"
            case .other: return "failed"
            }
        }
    }

    /// The failure class.
    public let code: Code
    /// What happened, in words (the transport's or libcurl's); empty for ``Code/timedOut``, ``Code/cancelled``,
    /// the truncations and ``Code/stalled``, whose values are in the properties below.
    public let detail: String
    /// For ``Code/tlsFailed``: true when the origin's certificate was not trusted (unknown issuer, expired, wrong
    /// host name) or the trust roots could not be read, false for any other handshake failure (protocol version,
    /// cipher, alert). False for every other class.
    public let isCertificateProblem: Bool
    /// For ``Code/truncated``: the announced body length (Content-Length) in bytes, `nil` when the length was
    /// not announced. `nil` for every other class.
    public let expectedBytes: Int64?
    /// For ``Code/truncated`` and ``Code/truncatedChunked``: the body bytes that arrived. `nil` otherwise.
    public let receivedBytes: Int64?
    /// For ``Code/stalled``: the rule that was not met. `nil` otherwise.
    public let stallRule: StallRule?
    /// For ``Code/bodyTooLarge``: the limit in bytes the body would have gone over. `nil` otherwise.
    public let byteLimit: Int64?

    private init(_ code: Code, _ detail: String = "", certificate: Bool = false, expected: Int64? = nil,
                 received: Int64? = nil, stallRule: StallRule? = nil, byteLimit: Int64? = nil) {
        self.byteLimit = byteLimit
        self.code = code
        self.detail = detail
        self.isCertificateProblem = certificate
        self.expectedBytes = expected
        self.receivedBytes = received
        self.stallRule = stallRule
    }

    /// ``Code/connectionFailed``, with what happened in words.
    public static func connectionFailed(_ detail: String) -> TransportError { TransportError(.connectionFailed, detail) }
    /// ``Code/nameNotResolved``, with what happened in words.
    public static func nameNotResolved(_ detail: String) -> TransportError { TransportError(.nameNotResolved, detail) }
    /// ``Code/tlsFailed``, in words; `certificate` as ``isCertificateProblem``.
    public static func tlsFailed(_ detail: String, certificate: Bool) -> TransportError {
        TransportError(.tlsFailed, detail, certificate: certificate)
    }
    /// ``Code/timedOut``.
    public static let timedOut = TransportError(.timedOut)
    /// ``Code/cancelled``.
    public static let cancelled = TransportError(.cancelled)
    /// ``Code/truncated``: `received` bytes of the `expected` (Content-Length) bytes; `expected` < 0 when the
    /// length was not announced.
    public static func truncated(expected: Int64, received: Int64) -> TransportError {
        TransportError(.truncated, expected: expected < 0 ? nil : expected, received: received)
    }
    /// ``Code/truncatedChunked``: `received` bytes arrived.
    public static func truncatedChunked(received: Int64) -> TransportError {
        TransportError(.truncatedChunked, received: received)
    }
    /// ``Code/stalled``: fewer than `minimumBytes` moved within `seconds`.
    public static func stalled(minimumBytes: Int64, seconds: TimeInterval) -> TransportError {
        TransportError(.stalled, stallRule: StallRule(minimumBytes: minimumBytes, seconds: seconds))
    }
    /// ``Code/invalidRequest``, with what was refused in words.
    public static func invalidRequest(_ detail: String) -> TransportError { TransportError(.invalidRequest, detail) }
    /// ``Code/invalidResponse``, with the rule the origin broke in words.
    public static func invalidResponse(_ detail: String) -> TransportError { TransportError(.invalidResponse, detail) }
    /// ``Code/bodyTooLarge``: the body would have gone over `limit` bytes.
    public static func bodyTooLarge(limit: Int64) -> TransportError { TransportError(.bodyTooLarge, byteLimit: limit) }
    /// ``Code/bodyTooLarge`` for a limit other than `maxTransferBytes`: `detail` says which and why.
    public static func bodyTooLarge(limit: Int64, detail: String) -> TransportError {
        TransportError(.bodyTooLarge, detail, byteLimit: limit)
    }
    /// ``Code/other``, in words.
    public static func other(_ detail: String) -> TransportError { TransportError(.other, detail) }

    /// Whether this is a network failure rather than a refusal: no connection (refused, host not resolved), no
    /// progress (timed out, stalled), or the connection lost mid-body (truncated, also a body cut short by the
    /// origin). False for cancellation, TLS, and requests or responses that broke HTTP's rules. The client does
    /// not use it (its offline fallback follows the error code); it is for callers deciding whether to retry.
    public var isOriginUnreachable: Bool {
        [Code.connectionFailed, .nameNotResolved, .timedOut, .truncated, .truncatedChunked, .stalled].contains(code)
    }

    /// A one-line description for logs and error messages: the class in words, then what happened.
    public var description: String {
        switch code {
        case .truncated:
            let received = receivedBytes ?? 0
            guard let expected = expectedBytes else {
                return "truncated body: connection lost after \(received) bytes of a body of unannounced length"
            }
            return "truncated body: connection closed after \(received) of \(expected) bytes"
        case .truncatedChunked:
            return "truncated body: connection closed after \(receivedBytes ?? 0) bytes of a chunked body"
        case .stalled:
            let rule = stallRule ?? StallRule(minimumBytes: 0, seconds: 0)
            return "timed out: stalled (fewer than \(rule.minimumBytes) bytes in \(Self.seconds(rule.seconds)) s)"
        case .bodyTooLarge where !detail.isEmpty:
            return "body too large: \(detail)"
        case .bodyTooLarge:
            return "body too large: over the \(byteLimit ?? 0)-byte limit one transfer of a body of unknown or content-coded length may write (maxTransferBytes); stopped there"
        case .other:
            return detail
        default:
            return detail.isEmpty ? code.description : "\(code.description): \(detail)"
        }
    }
}

extension TransportError {
    /// ``truncated(expected:received:)`` when `received` body bytes are not the complete content of a response
    /// to `method` with `status` and `headers` (``RFC9111/isComplete(method:response:receivedBodyBytes:)``);
    /// `nil` when they are.
    static func truncation(method: String, status: Int, headers: HTTPHeaders, received: Int64) -> TransportError? {
        let response = CacheResponse(status: status, headers: headers)
        guard !RFC9111.isComplete(method: method, response: response, receivedBodyBytes: received) else { return nil }
        let expected = RFC9111.announcedContentLength(method: method, response: response) ?? -1
        return .truncated(expected: expected, received: received)
    }

    /// `seconds` without a needless fraction (`30`, `1.5`).
    static func seconds(_ value: TimeInterval) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

/// Sends HTTP requests and streams response bodies into a file: the seam between the cache client and
/// the network (URLSession in production, scripted fakes in tests).
///
/// A transport never caches, never decides anything about freshness, and reports a body shorter than its
/// `Content-Length` as ``TransportError/truncated(expected:received:)``. It owns message framing: it refuses
/// the request fields ``MessageFraming/requestProblem(method:url:headers:)`` names, refuses a response head
/// ``MessageFraming`` finds mis-framed or unsolicited, and applies the request's ``StallRule``.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and writes the response body to `bodyFile` (through its open descriptor, never by its
    /// path), or returns a small body in ``TransportResponse/inMemoryBody`` instead (then nothing is written).
    ///
    /// - Parameters:
    ///   - request: what to send.
    ///   - bodyFile: the open, owner-only file the body is streamed into (``ResponseBodyFile``); the caller
    ///     owns it.
    ///   - events: called with the response head as soon as it is received (before the body), then with the
    ///     body's progress (``TransportEvents``).
    /// - Returns: the response head and the number of body bytes written.
    /// - Throws: `TransportError` — `.connectionFailed`, `.timedOut`, `.stalled` (the request's stall rule),
    ///   `.cancelled` (task cancelled), `.truncated` / `.truncatedChunked` (body cut off), `.invalidRequest`
    ///   (a caller field refused by ``MessageFraming``, nothing sent), `.invalidResponse` (the origin broke the
    ///   framing rules of ``MessageFraming``; no body is returned), `.other`.
    func send(_ request: TransportRequest, bodyFile: ResponseBodyFile,
              events: TransportEvents) async throws(TransportError) -> TransportResponse
}

extension HTTPTransport {
    /// ``send(_:bodyFile:events:)`` reporting only progress: (bytes received so far, bytes expected or `nil`).
    /// - Throws: `TransportError`, as ``send(_:bodyFile:events:)``.
    public func send(_ request: TransportRequest, bodyFile: ResponseBodyFile,
                     progress: (@Sendable (Int64, Int64?) -> Void)?) async throws(TransportError) -> TransportResponse {
        try await send(request, bodyFile: bodyFile, events: TransportEvents(progress: progress))
    }

    /// ``send(_:bodyFile:events:)`` into a file created at `url` (``ResponseBodyFile/init(creatingAt:)``:
    /// mode 0600, never through a symbolic link, created only when the body is not returned in memory), for
    /// callers that name the body file by path (tests, tools).
    /// - Throws: `TransportError`, as ``send(_:bodyFile:events:)``; `.other` when the file cannot be created.
    public func send(_ request: TransportRequest, bodyFile url: URL,
                     events: TransportEvents) async throws(TransportError) -> TransportResponse {
        try await send(request, bodyFile: ResponseBodyFile(creatingAt: url), events: events)
    }

    /// ``send(_:bodyFile:events:)`` into a file created at `url`, reporting only progress.
    /// - Throws: `TransportError`, as ``send(_:bodyFile:events:)``; `.other` when the file cannot be created.
    public func send(_ request: TransportRequest, bodyFile url: URL,
                     progress: (@Sendable (Int64, Int64?) -> Void)?) async throws(TransportError) -> TransportResponse {
        try await send(request, bodyFile: ResponseBodyFile(creatingAt: url), events: TransportEvents(progress: progress))
    }
}

/// Reason phrases for status codes (RFC 9110 §15), since URLSession does not expose the received one; also the
/// phrase in messages such as "HTTP 404 Not Found" (`DownloadError.description`) and for curl's empty reason.
public enum HTTPStatusText {
    /// The standard reason phrase for `status`, or `"Status <n>"` for an unknown code.
    public static func text(for status: Int) -> String {
        standardText(for: status) ?? "Status \(status)"
    }

    /// The standard reason phrase for `status` (RFC 9110 §15), or `nil` for a code it does not define here.
    public static func standardText(for status: Int) -> String? {
        switch status {
        case 100: return "Continue"
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 203: return "Non-Authoritative Information"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 300: return "Multiple Choices"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 304: return "Not Modified"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 406: return "Not Acceptable"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 415: return "Unsupported Media Type"
        case 416: return "Range Not Satisfiable"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return nil
        }
    }
}
