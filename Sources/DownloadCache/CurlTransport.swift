#if canImport(CCurl)
import CCurl
import Foundation
import HTTPCacheSemantics
import CacheStore
import SharedTier
import Synchronization

/// An ``HTTPTransport`` on libcurl's multi interface for Linux: responses arrive exactly as the origin sent
/// them, which URLSession on Linux cannot promise.
///
/// - Response head: the raw status line and header lines of the last response (a 1xx interim response or
///   an earlier redirect hop is discarded) — received reason phrase, field order, duplicates (`Set-Cookie`
///   never joined), name case (`ETag` stays `ETag`), obs-fold lines joined. Nothing is dropped here; the
///   semantics layer removes hop-by-hop fields.
/// - Body: bytes exactly as sent, in ``TransportResponse/inMemoryBody`` when announced as at most
///   ``smallBodyLimit`` bytes, else streamed into the body file. No `Accept-Encoding` is added and libcurl never decodes a content
///   coding, so `Content-Encoding` and `Content-Length` always describe the bytes in the body file
///   (``TransportResponse/decodedContentEncoding`` is always `nil`). Chunked transfer coding is removed.
/// - Request: any method token; header fields sent in the given order with duplicates; a field with an
///   empty value is sent empty. Fields that frame the message (Content-Length, Transfer-Encoding,
///   Connection, Expect, a Host naming another authority ...: ``MessageFraming``) are refused with
///   ``TransportError/invalidRequest(_:)`` before anything is sent. libcurl's own `Accept: */*` is suppressed
///   unless the caller set `Accept`, `Expect: 100-continue` is never sent, and a request body gets no invented
///   `Content-Type`. The path is sent as given (no dot-segment squashing). http and https only.
/// - Response framing is checked on the raw header lines before any body byte is taken: an invalid or
///   conflicting Content-Length, Transfer-Encoding with Content-Length, an unsolicited 304 or 206 fail with
///   ``TransportError/invalidResponse(_:)`` (libcurl alone would read such a body until the connection closes).
/// - Stalls: the request's ``StallRule`` is checked about once a second; a stalled transfer fails with
///   ``TransportError/stalled(minimumBytes:seconds:)``.
/// - Redirects are followed (at most 20 hops) only when ``TransportRequest/followRedirects`` is true.
/// - One dedicated thread runs every transfer; connections are kept alive and reused. The ``TransportEvents``
///   callbacks run on that thread (`head` once, `progress` after each body chunk): keep them short.
/// - Proxies: libcurl's defaults apply (the `http_proxy` / `https_proxy` / `no_proxy` environment variables).
/// - libcurl itself (libcurl.so.4) is loaded with dlopen by the first ``send(_:bodyFile:events:)``, which also
///   initialises it and starts the thread; making a transport loads nothing.
public final class CurlTransport: HTTPTransport, Sendable {
    /// The User-Agent sent by default (`dlcache/<version>`).
    public static let defaultUserAgent = "dlcache/0.1.0"

    /// Seconds allowed to establish a connection (TCP + TLS).
    public let connectTimeout: TimeInterval
    /// Idle timeout in seconds: a transfer with no byte received for this long fails with `.timedOut`.
    public let idleTimeout: TimeInterval
    /// The User-Agent sent when the request sets none; `nil` sends no User-Agent at all.
    public let userAgent: String?
    /// Bytes: a body whose announced Content-Length is at most this is returned in
    /// ``TransportResponse/inMemoryBody`` and the body file stays empty; larger or unannounced bodies stream
    /// to the file.
    public let smallBodyLimit: Int64
    /// The certificates trusted for `https://` origins (default ``TLSTrust/system``).
    public let trust: TLSTrust
    private let maxConnectionsPerHost: Int
    /// The libcurl multi handle and its thread, made by the first ``send(_:bodyFile:events:)``: a process that
    /// answers from the cache never starts them (nor initialises libcurl and its TLS library). `nil` inside
    /// `.made` when libcurl could not create a multi handle.
    private let loopState = Mutex<LoopState>(.notMade)
    /// The loop of paced transfers (``TransportRequest/maxReceiveBytesPerSecond``), made on first use: its own
    /// connections, never multiplexed. libcurl 7.88 paces a transfer by not reading its connection, so a paced
    /// stream on a shared HTTP/2 connection held back every other stream of it until the paced one had ended.
    private let pacedLoopState = Mutex<LoopState>(.notMade)

    private enum LoopState {
        case notMade
        case made(CurlEventLoop?)
    }

    /// Creates a transport with its own libcurl multi handle and event-loop thread.
    /// - Parameters:
    ///   - maxConnectionsPerHost: parallel connections per host (default 6); further transfers wait.
    ///   - connectTimeout: seconds allowed to connect (default 10).
    ///   - idleTimeout: seconds without progress before `.timedOut` (default 60, applied whole-second,
    ///     at least 1), on top of a request's own total ``TransportRequest/timeout``.
    ///   - userAgent: the User-Agent for requests that set none (default ``defaultUserAgent``; `nil`: none).
    ///   - smallBodyLimit: bytes; bodies announced up to this size are handed over in memory (default 1 MiB;
    ///     0 or less: every body goes to the file).
    ///   - trust: the certificates trusted for `https://` (default: the system's, verified).
    public init(maxConnectionsPerHost: Int = 6, connectTimeout: TimeInterval = 10, idleTimeout: TimeInterval = 60,
                userAgent: String? = CurlTransport.defaultUserAgent, smallBodyLimit: Int64 = 1 << 20,
                trust: TLSTrust = .system) {
        self.smallBodyLimit = smallBodyLimit
        self.trust = trust
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
        self.userAgent = userAgent
        self.maxConnectionsPerHost = maxConnectionsPerHost
    }

    deinit {
        if case .made(let loop) = loopState.withLock({ $0 }) { loop?.shutdown() }
        if case .made(let loop) = pacedLoopState.withLock({ $0 }) { loop?.shutdown() }
    }

    /// The event loop of `request`, made on first use: the paced loop for a paced request, else the shared one.
    private func loop(for request: TransportRequest) -> CurlEventLoop? {
        let limit = maxConnectionsPerHost
        if (request.maxReceiveBytesPerSecond ?? 0) > 0 {
            return pacedLoopState.withLock { state in Self.loop(in: &state, limit: limit, multiplexing: false) }
        }
        return loopState.withLock { state in Self.loop(in: &state, limit: limit, multiplexing: true) }
    }

    /// The loop `state` holds, made now when there is none yet.
    private static func loop(in state: inout LoopState, limit: Int, multiplexing: Bool) -> CurlEventLoop? {
        if case .made(let loop) = state { return loop }
        let loop = CurlEventLoop(maxConnectionsPerHost: limit, multiplexing: multiplexing)
        state = .made(loop)
        return loop
    }

    /// Connections opened so far by finished transfers (kept-alive reuse keeps this well below the number
    /// of requests); for tests and diagnostics.
    public var connectionsOpened: Int {
        var total = 0
        if case .made(let loop) = loopState.withLock({ $0 }) { total += loop?.connectionsOpened ?? 0 }
        if case .made(let loop) = pacedLoopState.withLock({ $0 }) { total += loop?.connectionsOpened ?? 0 }
        return total
    }

    /// Sends `request` and streams the body into `bodyFile`; see ``HTTPTransport/send(_:bodyFile:events:)``.
    /// The head is reported from the header callback once the final head's framing is accepted (a 3xx that
    /// libcurl follows is not), so before the first body byte.
    ///
    /// - Throws: `TransportError.connectionFailed` (refused, DNS, connection lost before a response),
    ///   `.timedOut` (request `timeout` or idle timeout), `.cancelled` (task cancelled), `.truncated` (body
    ///   shorter than Content-Length), `.truncatedChunked` (a chunked body cut off), `.stalled` (stall rule),
    ///   `.invalidRequest` (a field ``MessageFraming`` refuses; nothing sent), `.invalidResponse` (mis-framed
    ///   or unsolicited response head, response header too large), `.other` (unsupported scheme, unwritable
    ///   body file: "write failed: ...", TLS and other libcurl errors; libcurl.so.4 that cannot be loaded:
    ///   "cannot load libcurl.so.4: <the dynamic loader's reason>", for every request).
    public func send(_ request: TransportRequest, bodyFile: ResponseBodyFile,
                     events: TransportEvents) async throws(TransportError) -> TransportResponse {
        // libcurl.so.4 is loaded by the first request's first libcurl call (CCurl.h); it may be missing.
        if let failure = dlc_curl_load_error() { throw TransportError.other(String(cString: failure)) }
        guard let loop = loop(for: request) else { throw TransportError.other("libcurl could not create a multi handle") }
        let scheme = request.url.scheme?.lowercased() ?? ""
        guard scheme == "http" || scheme == "https" else {
            throw TransportError.other("unsupported URL scheme '\(scheme)' (http and https only)")
        }
        if let problem = MessageFraming.requestProblem(method: request.method, url: request.url, headers: request.headers) {
            throw TransportError.invalidRequest(problem)
        }
        var request = request
        request.headers = MessageFraming.sentHeaders(request.headers)
        // A small announced body is returned in memory; any other is streamed into `bodyFile`'s descriptor.
        guard let transfer = CurlTransfer(request: request, bodyFile: bodyFile,
                                                smallBodyLimit: smallBodyLimit, events: events) else {
            throw TransportError.other("curl_easy_init failed")
        }
        if let failure = configure(transfer) {
            transfer.finishWithError(.other(failure))
            throw TransportError.other(failure)
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.continuation = continuation
                loop.submit(transfer)
            }
        } onCancel: {
            loop.cancel(transfer)
        }
        return try result.get()
    }

}

extension CurlTransport {
    /// libcurl's receive buffer per transfer, in bytes (CURLOPT_BUFFERSIZE; libcurl's default is 16 KiB): the
    /// most body bytes one write callback hands over. A socket read returns what has arrived, so a larger buffer
    /// delays no byte; it makes a fast transfer cost fewer callbacks, body-file writes and stream wake-ups.
    /// A paced transfer (`maxReceiveBytesPerSecond`) keeps libcurl's 16 KiB: libcurl 7.88 paces by whole buffer
    /// reads, and with 256 KiB a 100 KiB/s limit let ≈26 MB through in 3 s (≈1.6 MB with 16 KiB).
    static let receiveBufferBytes = 256 << 10
    /// libcurl's default receive buffer, in bytes (CURL_MAX_WRITE_SIZE), kept for paced transfers.
    static let pacedReceiveBufferBytes = 16 << 10

    /// Sets every libcurl option of `transfer`; returns the first failure in words, `nil` when all were set.
    private func configure(_ transfer: CurlTransfer) -> String? {
        let easy = transfer.easy
        let request = transfer.request
        var failure: String?
        func check(_ code: CURLcode, _ what: String) {
            if code != CURLE_OK, failure == nil {
                failure = "cannot set \(what): \(String(cString: curl_easy_strerror(code)))"
            }
        }
        check(dlc_easy_setopt_string(easy, CURLOPT_URL, request.url.absoluteString), "URL")
        check(dlc_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1), "NOSIGNAL")
        let paced = (request.maxReceiveBytesPerSecond ?? 0) > 0
        check(dlc_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, paced ? Self.pacedReceiveBufferBytes : Self.receiveBufferBytes),
              "BUFFERSIZE")
        check(dlc_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"), "PROTOCOLS_STR")
        check(dlc_easy_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"), "REDIR_PROTOCOLS_STR")
        check(dlc_easy_setopt_long(easy, CURLOPT_PATH_AS_IS, 1), "PATH_AS_IS")
        // As `curl --parallel` does, over TLS: a transfer to an origin whose connection is being set up waits to
        // learn whether it multiplexes (HTTP/2, offered by ALPN, known once the handshake ends) and then runs as
        // one of its streams instead of opening a connection of its own; an HTTP/1.1 origin still gets up to the
        // per-host connection limit. Not for plain http, where libcurl learns it only from the first response's
        // status line, so a slow response would hold back every other request to that origin. The option belongs
        // to the transfer, so a redirect from https to plain http keeps it (and one the other way goes without).
        // (A paced transfer runs on a loop that never multiplexes: nothing to wait for.)
        if !paced, request.url.scheme?.lowercased() == "https" {
            check(dlc_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1), "PIPEWAIT")
        }
        // Plain HTTP/1: a connection holding bytes past the end of its last response (RFC 9112 §6.3) is not
        // reused: checked just before each request is sent on it. Over TLS such bytes wait in the TLS library's
        // buffer, out of sight of a check of the socket.
        if request.url.scheme?.lowercased() == "http" {
            check(dlc_easy_check_connection_before_request(easy), "PREREQFUNCTION")
        }
        check(dlc_easy_setopt_long(easy, CURLOPT_HTTP_CONTENT_DECODING, 0), "HTTP_CONTENT_DECODING")
        check(dlc_easy_setopt_write_callback(easy, CURLOPT_HEADERFUNCTION, curlHeaderCallback), "HEADERFUNCTION")
        check(dlc_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, transfer.userData), "HEADERDATA")
        check(dlc_easy_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION, curlWriteCallback), "WRITEFUNCTION")
        check(dlc_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, transfer.userData), "WRITEDATA")
        check(dlc_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(connectTimeout)), "CONNECTTIMEOUT")
        check(dlc_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, 1), "LOW_SPEED_LIMIT")
        check(dlc_easy_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, max(1, (Self.milliseconds(idleTimeout) + 999) / 1_000)),
              "LOW_SPEED_TIME")
        if let total = request.timeout, total > 0 {
            check(dlc_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, Self.milliseconds(total)), "TIMEOUT_MS")
        }
        if let rate = request.maxReceiveBytesPerSecond, rate > 0 {
            check(dlc_easy_setopt_off(easy, CURLOPT_MAX_RECV_SPEED_LARGE, curl_off_t(rate)), "MAX_RECV_SPEED_LARGE")
        }
        if let rule = request.stallRule, rule.isActive {
            check(dlc_easy_setopt_long(easy, CURLOPT_NOPROGRESS, 0), "NOPROGRESS")
            check(dlc_easy_setopt_xferinfo_callback(easy, curlProgressCallback), "XFERINFOFUNCTION")
            check(dlc_easy_setopt_pointer(easy, CURLOPT_XFERINFODATA, transfer.userData), "XFERINFODATA")
        }
        if let userAgent, !request.headers.contains("User-Agent") {
            check(dlc_easy_setopt_string(easy, CURLOPT_USERAGENT, userAgent), "USERAGENT")
        }
        if request.followRedirects {
            check(dlc_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 1), "FOLLOWLOCATION")
            check(dlc_easy_setopt_long(easy, CURLOPT_MAXREDIRS, 20), "MAXREDIRS")
        }
        if let file = trust.caFile { check(dlc_easy_setopt_string(easy, CURLOPT_CAINFO, file), "CAINFO") }
        if let directory = trust.caDirectory { check(dlc_easy_setopt_string(easy, CURLOPT_CAPATH, directory), "CAPATH") }
        if !trust.verifiesPeer {
            check(dlc_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 0), "SSL_VERIFYPEER")
            check(dlc_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 0), "SSL_VERIFYHOST")
        }
        configureMethod(transfer, check: check)
        transfer.headerList = Self.headerList(for: request)
        check(dlc_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, transfer.headerList), "HTTPHEADER")
        return failure
    }

    /// Method and body: HEAD → NOBODY; a body → POSTFIELDS (copied) plus CUSTOMREQUEST unless POST;
    /// any other method → CUSTOMREQUEST; GET is libcurl's default.
    private func configureMethod(_ transfer: CurlTransfer, check: (CURLcode, String) -> Void) {
        let easy = transfer.easy
        let request = transfer.request
        let method = request.method
        if method == "HEAD" {
            check(dlc_easy_setopt_long(easy, CURLOPT_NOBODY, 1), "NOBODY")
            return
        }
        if let body = request.body ?? (method == "POST" ? Data() : nil) {
            // The size first: without it libcurl would take strlen() of the copied bytes.
            check(dlc_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)), "POSTFIELDSIZE")
            var bytes = [UInt8](body)
            if bytes.isEmpty { bytes = [0] }
            bytes.withUnsafeMutableBytes { raw in
                check(dlc_easy_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, raw.baseAddress), "COPYPOSTFIELDS")
            }
            if method != "POST" {
                check(dlc_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method), "CUSTOMREQUEST")
            }
        } else if method != "GET" {
            check(dlc_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method), "CUSTOMREQUEST")
        }
    }

    /// The request's fields as a curl_slist in order (duplicates kept; an empty value as `Name;`), plus the
    /// suppressions of libcurl's own `Accept`, `Expect` (never sent: framing belongs to the transport) and
    /// (with a body) `Content-Type`.
    private static func headerList(for request: TransportRequest) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        func append(_ line: String) {
            if let grown = curl_slist_append(list, line) { list = grown }
        }
        for field in request.headers {
            append(field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)")
        }
        if !request.headers.contains("Accept") { append("Accept:") }
        append("Expect:")
        if (request.body != nil || request.method == "POST") && !request.headers.contains("Content-Type") {
            append("Content-Type:")
        }
        return list
    }

    /// `seconds` as whole milliseconds for libcurl (at least 1, capped to fit a C long).
    private static func milliseconds(_ seconds: TimeInterval) -> Int {
        guard seconds.isFinite, seconds > 0 else { return 1 }
        return Int(min(seconds * 1_000, Double(Int32.max)).rounded(.up))
    }
}
#endif
