#if canImport(CCurl)
import CCurl
import Foundation
import HTTPCacheSemantics
import Synchronization
import CacheStore
import SharedTier

/// One libcurl transfer of ``CurlTransport``: the easy handle, its header list, the body file descriptor,
/// the response head being collected, and the continuation its completion resumes.
///
/// Thread confinement (why `@unchecked Sendable` is sound): the caller's task builds and configures the
/// transfer, then hands it to the event loop through a mutex-protected queue; from then on only the
/// loop thread touches the mutable fields (the libcurl callbacks run on it too). `cancelled` is atomic
/// because the cancellation handler sets it from any thread.
final class CurlTransfer: @unchecked Sendable {
    typealias Outcome = Result<TransportResponse, TransportError>

    let request: TransportRequest
    /// The easy handle (`CURL *`), owned until ``finish(_:)`` cleans it up.
    let easy: UnsafeMutableRawPointer
    /// Set by the cancellation handler; read by the loop when it adds or finishes the transfer.
    let cancelled = Atomic<Bool>(false)
    /// The request header list; must outlive the transfer.
    var headerList: UnsafeMutablePointer<curl_slist>?
    /// The continuation ``CurlTransport/send(_:bodyFile:events:)`` waits on; resumed exactly once.
    var continuation: CheckedContinuation<Outcome, Never>?

    /// The open file the body is streamed into (never opened by path here).
    private let bodyFile: ResponseBodyFile
    private let progress: (@Sendable (Int64, Int64?) -> Void)?
    /// ``TransportEvents/head``; set to `nil` once the head was reported.
    private var reportHead: (@Sendable (TransportResponseHead) -> Void)?
    private let smallBodyLimit: Int64
    /// The body collected in memory when its announced length is at most `smallBodyLimit`.
    private var memoryBody: Data?
    private var bodyStarted = false
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var head = CurlResponseHead()
    private var received: Int64 = 0
    private var writeError: String?
    /// Why the response head was refused (``MessageFraming``); the header callback then aborts the transfer.
    private var responseProblem: String?
    /// Bytes of header lines received (every block), for the stall rule.
    private var headerBytes: Int64 = 0
    /// The stall rule's current window: when it started (monotonic nanoseconds, 0 = not yet) and the byte
    /// count at its start.
    private var windowStart: UInt64 = 0
    private var windowBytes: Int64 = 0
    /// Set when the stall rule aborted the transfer.
    private var stalled = false

    /// Creates the easy handle; `nil` when libcurl cannot allocate one.
    init?(request: TransportRequest, bodyFile: ResponseBodyFile, smallBodyLimit: Int64, events: TransportEvents) {
        guard let easy = curl_easy_init() else { return nil }
        self.request = request
        self.easy = easy
        self.bodyFile = bodyFile
        self.progress = events.progress
        self.reportHead = events.head
        self.smallBodyLimit = smallBodyLimit
        self.errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        _ = dlc_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errorBuffer))
    }

    deinit {
        errorBuffer.deallocate()
    }

    /// This transfer as libcurl callback user data (unretained: the loop's table keeps it alive).
    var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// The transfer behind libcurl callback user data.
    static func from(_ userData: UnsafeMutableRawPointer) -> CurlTransfer {
        Unmanaged<CurlTransfer>.fromOpaque(userData).takeUnretainedValue()
    }

    // MARK: - Callbacks (loop thread)

    /// One raw header line from libcurl; at the end of a final (non-1xx) head, checks its framing and status.
    /// - Returns: false to abort the transfer (the head was refused; no body byte is taken).
    func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) -> Bool {
        headerBytes += Int64(bytes.count)
        let wasComplete = head.isComplete
        head.consume(bytes)
        // RFC 9110 §15.2.2: a server switches protocols only when the request asked to with Upgrade, which this
        // transport never sends; an unsolicited 101 is a broken response, never a head to read "a body" after.
        if head.isComplete, !wasComplete, head.status == 101 {
            responseProblem = "unsolicited 101 Switching Protocols to a request that asked for no upgrade (RFC 9110 §15.2.2)"
            return false
        }
        guard head.isComplete, !wasComplete, let status = head.status, !(100..<200).contains(status) else { return true }
        responseProblem = head.framingAnomaly
            ?? MessageFraming.responseProblem(status: status, headers: head.headers, version: head.version,
                                              request: request)
        guard responseProblem == nil else { return false }
        // A redirect libcurl follows itself is not the final response.
        if !(request.followRedirects && (300..<400).contains(status) && head.headers.contains("Location")) {
            reportHeadOnce()
        }
        return true
    }

    /// Reports the collected final head through ``TransportEvents/head``, once.
    private func reportHeadOnce() {
        guard let report = reportHead, let status = head.status else { return }
        reportHead = nil
        report(TransportResponseHead(url: effectiveURL, status: status, statusText: head.statusText,
                                     headers: head.headers, interimResponses: head.interim))
    }

    /// The URL that answered (libcurl's effective URL), else the request URL.
    private var effectiveURL: URL {
        var effective: UnsafeMutablePointer<CChar>?
        if dlc_easy_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK, let effective,
           let parsed = URL(string: String(cString: effective)) {
            return parsed
        }
        return request.url
    }

    /// libcurl's progress callback (about once a second, and after each chunk): applies the stall rule.
    /// - Returns: false to abort the transfer as stalled.
    func checkStall(uploaded: Int64) -> Bool {
        guard let rule = request.stallRule, rule.isActive else { return true }
        let now = DispatchTime.now().uptimeNanoseconds
        let moved = headerBytes + received + max(0, uploaded)
        if windowStart == 0 {
            windowStart = now
            windowBytes = moved
            return true
        }
        guard Double(now - windowStart) >= rule.seconds * 1e9 else { return true }
        if moved - windowBytes < rule.minimumBytes {
            stalled = true
            return false
        }
        windowStart = now
        windowBytes = moved
        return true
    }

    /// One chunk of body bytes: kept in memory (small announced body) or written fully to the body file;
    /// a failed write aborts the transfer.
    /// - Returns: bytes consumed; anything but `bytes.count` makes libcurl fail with CURLE_WRITE_ERROR.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        if !bodyStarted {
            bodyStarted = true
            if let announced = head.contentLength, announced <= smallBodyLimit {
                memoryBody = Data(capacity: Int(announced))
            }
        }
        if memoryBody != nil, received + Int64(bytes.count) <= smallBodyLimit {
            memoryBody?.append(base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            received += Int64(bytes.count)
            progress?(received, head.contentLength)
            return bytes.count
        }
        if let early = memoryBody {
            // More bytes than announced: spill what is held to the file and stream the rest there.
            memoryBody = nil
            let spilled = early.withUnsafeBytes { writeFully($0) }
            if !spilled { return 0 }
        }
        guard writeFully(bytes) else { return 0 }
        received += Int64(bytes.count)
        progress?(received, head.contentLength)
        return bytes.count
    }

    /// Writes all of `bytes` to the body file; records the failure and returns false.
    private func writeFully(_ bytes: UnsafeRawBufferPointer) -> Bool {
        do {
            try bodyFile.write(bytes)
            return true
        } catch {
            writeError = error.description
            return false
        }
    }

    // MARK: - Completion (loop thread)

    /// Classifies libcurl's result (`nil`: cancelled before it ran), releases every resource and resumes the
    /// waiting caller. The easy handle must already be removed from the multi handle.
    func finish(_ code: CURLcode?) {
        if let code, !cancelled.load(ordering: .acquiring) {
            complete(classify(code))
        } else {
            complete(.failure(.cancelled))
        }
    }

    /// Completes the transfer with `error` without running it (e.g. libcurl refused to add it).
    func finishWithError(_ error: TransportError) {
        complete(.failure(error))
    }

    private func complete(_ outcome: Outcome) {
        curl_easy_cleanup(easy)
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
        if case .success(let response) = outcome { progress?(response.bodySize, response.bodySize) }
        continuation?.resume(returning: outcome)
        continuation = nil
    }

    /// Connections this transfer opened (0 when it reused a kept-alive one).
    var connectionsOpened: Int {
        var count = 0
        _ = dlc_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &count)
        return count
    }

    /// libcurl's detailed error text, or its generic text for `code`.
    private func detail(_ code: CURLcode) -> String {
        let specific = String(cString: errorBuffer)
        if !specific.isEmpty { return specific }
        return String(cString: curl_easy_strerror(code))
    }

    /// Whether the last response has content (``RFC9111/responseHasContent(method:status:)``).
    private var bodyExpected: Bool {
        guard let status = head.status else { return false }
        return RFC9111.responseHasContent(method: request.method, status: status)
    }

    /// The truncation error for a body cut off after `received` bytes: against its Content-Length, as a chunked
    /// body, or of unannounced length.
    private var truncation: TransportError {
        if let expected = head.contentLength { return .truncated(expected: expected, received: received) }
        if head.headers.contains("Transfer-Encoding") { return .truncatedChunked(received: received) }
        return .truncated(expected: -1, received: received)
    }

    /// Maps a CURLcode and the collected head to the transport's result.
    private func classify(_ code: CURLcode) -> Outcome {
        if let responseProblem { return .failure(.invalidResponse(responseProblem)) }
        if stalled, let rule = request.stallRule {
            return .failure(.stalled(minimumBytes: rule.minimumBytes, seconds: rule.seconds))
        }
        switch code {
        case CURLE_OK:
            return response()
        case CURLE_OPERATION_TIMEDOUT:
            return .failure(.timedOut)
        case CURLE_PARTIAL_FILE:
            return .failure(truncation)
        case CURLE_RECV_ERROR where head.isComplete && bodyExpected:
            return .failure(truncation)
        case CURLE_RECV_ERROR where !head.isComplete && detail(code).contains("Too large response headers"):
            // libcurl refuses a response head over 300 KB in all (MAX_HTTP_RESP_HEADER_SIZE) with a receive error.
            return .failure(.invalidResponse("response header too large (more than 300 KB of header lines, libcurl's limit)"))
        case CURLE_OUT_OF_MEMORY where !head.isComplete:
            // libcurl refuses a header line over 100 KB (CURL_MAX_HTTP_HEADER) with "out of memory".
            return .failure(.invalidResponse("response header too large (libcurl takes at most 100 KB per header line)"))
        case CURLE_WEIRD_SERVER_REPLY:
            return .failure(.invalidResponse(detail(code)))
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .failure(.nameNotResolved(detail(code)))
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE:
            return .failure(.tlsFailed(detail(code), certificate: true))
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_CERTPROBLEM,
             CURLE_SSL_CIPHER, CURLE_USE_SSL_FAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED,
             CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS:
            return .failure(.tlsFailed(detail(code), certificate: false))
        case CURLE_COULDNT_CONNECT, CURLE_RECV_ERROR,
             CURLE_SEND_ERROR, CURLE_GOT_NOTHING:
            return .failure(.connectionFailed(detail(code)))
        case CURLE_WRITE_ERROR where writeError != nil:
            return .failure(.other("write failed: \(writeError ?? "")"))
        default:
            return .failure(.other(detail(code)))
        }
    }

    /// The successful response; a body shorter than its Content-Length is `.truncated`.
    private func response() -> Outcome {
        guard let status = head.status, head.isComplete else {
            return .failure(.connectionFailed("no HTTP response head received"))
        }
        if let truncation = TransportError.truncation(method: request.method, status: status, headers: head.headers,
                                                      received: received) {
            return .failure(truncation)
        }
        let url = effectiveURL
        reportHeadOnce()
        // A body not held in memory is in the file, which exists even when the body is empty.
        if memoryBody == nil {
            do { try bodyFile.open() } catch { return .failure(error) }
        }
        var response = TransportResponse(url: url, status: status, statusText: head.statusText,
                                         headers: head.headers, bodySize: received, inMemoryBody: memoryBody)
        response.interimResponses = head.interim
        return .success(response)
    }
}

/// libcurl's CURLOPT_HEADERFUNCTION: forwards each raw header line to its ``CurlTransfer``.
let curlHeaderCallback: dlc_write_callback = { buffer, size, count, userData in
    guard let buffer, let userData else { return 0 }
    let length = size * count
    let accepted = CurlTransfer.from(userData).receiveHeaderLine(UnsafeRawBufferPointer(start: buffer, count: length))
    return accepted ? length : 0
}

/// libcurl's CURLOPT_XFERINFOFUNCTION: the stall rule of its ``CurlTransfer`` (non-zero aborts).
let curlProgressCallback: dlc_xferinfo_callback = { userData, _, _, _, uploaded in
    guard let userData else { return 0 }
    return CurlTransfer.from(userData).checkStall(uploaded: Int64(uploaded)) ? 0 : 1
}

/// libcurl's CURLOPT_WRITEFUNCTION: forwards each body chunk to its ``CurlTransfer``.
let curlWriteCallback: dlc_write_callback = { buffer, size, count, userData in
    guard let buffer, let userData else { return 0 }
    return CurlTransfer.from(userData).receiveBody(UnsafeRawBufferPointer(start: buffer, count: size * count))
}
#endif
