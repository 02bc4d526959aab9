import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPCacheSemantics
import Synchronization
import CacheStore
import SharedTier

/// One URLSession exchange of ``URLSessionTransport``: owns the task, polls its progress, enforces the total
/// timeout, and turns libcurl's outcome into a ``TransportResponse`` or a classified ``TransportError``.
final class TransportExchange: Sendable {
    struct State: ExchangeTaskState {
        var task: URLSessionTask?
        var expired = false
        var finished = false
        var cancelRequested = false
        var resumed = false
        var stalled = false
        var poller: Task<Void, Never>?
        var progress: (@Sendable (Int64, Int64?) -> Void)?
    }

    let request: TransportRequest
    let bodyFile: ResponseBodyFile
    private let state = Mutex(State())

    init(request: TransportRequest, bodyFile: ResponseBodyFile) {
        self.request = request
        self.bodyFile = bodyFile
    }

    /// The URLSession task identifier once started.
    var taskIdentifier: Int? {
        state.withLock { $0.task?.taskIdentifier }
    }

    /// Registers and resumes `task`; starts progress polling and the total-timeout timer.
    func start(_ task: URLSessionTask, delegate: URLSessionTransportDelegate,
               progress: (@Sendable (Int64, Int64?) -> Void)?) {
        let box = UncheckedTask(task: task)
        state.withLock { state in
            state.task = task
            state.progress = progress
        }
        delegate.register(self, taskIdentifier: task.taskIdentifier)
        armTotalTimeout(task)
        armStallRule(task)
        if let progress {
            let poller = Task { [weak self] in
                var last: Int64 = -1
                while !Task.isCancelled {
                    let received = box.task.countOfBytesReceived
                    if received != last {
                        last = received
                        let expected = box.task.countOfBytesExpectedToReceive
                        progress(received, expected > 0 ? expected : nil)
                    }
                    if self == nil { return }
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
            state.withLock { $0.poller = poller }
        }
        resume(task)
    }

    /// The completion handler owns the caller's continuation, so the exchange waits for URLSession's completion
    /// (``TaskLifecycleExchange/abandonAfterCancel()``); cancelling again is all it can do.
    func abandonAfterCancel() {}

    /// Runs `body` with the state under the lock (``TaskLifecycleExchange``: timeout, resume, `cancel()`).
    func withTaskState<R: Sendable>(_ body: (inout State) -> R) -> R {
        state.withLock { body(&$0) }
    }

    /// Copies the download task's file into `bodyFile` (owner-only, whatever mode URLSession gave its own
    /// file), deletes URLSession's file and classifies the outcome.
    func finish(location: URL?, response: URLResponse?, error: Error?) -> Result<TransportResponse, TransportError> {
        let (expired, stalled, poller, task, progress) = state.withLock { state in
            state.finished = true
            return (state.expired, state.stalled, state.poller, state.task, state.progress)
        }
        poller?.cancel()
        let http = (response ?? task?.response) as? HTTPURLResponse
        var received: Int64 = task?.countOfBytesReceived ?? 0
        if let location, error == nil {
            defer { try? FileManager.default.removeItem(at: location) }
            do { try bodyFile.append(contentsOf: location) } catch { return .failure(error) }
            received = bodyFile.size ?? received
        } else if let location {
            try? FileManager.default.removeItem(at: location)
        }
        if let error {
            return .failure(Self.classify(error, response: http, received: received, expired: expired,
                                          stalled: stalled ? request.stallRule : nil, method: request.method))
        }
        guard let http, let url = http.url ?? task?.currentRequest?.url else {
            return .failure(.connectionFailed("no HTTP response"))
        }
        if location == nil { received = 0 }
        let result = Self.response(http, url: url, received: received, request: request)
        if case .success(let done) = result { progress?(done.bodySize, done.bodySize) }
        return result
    }

    /// The header fields of `http` (sorted by name; URLSession joins repeated fields with ", ").
    static func headers(of http: HTTPURLResponse) -> HTTPHeaders {
        var headers = HTTPHeaders()
        let fields = http.allHeaderFields.compactMap { key, value -> (String, String)? in
            guard let name = key as? String else { return nil }
            return (name, "\(value)")
        }.sorted { $0.0.lowercased() < $1.0.lowercased() }
        for (name, value) in fields { headers.add(name, value) }
        return headers
    }

    /// Why the response head of `http` is refused for `request` (``MessageFraming``), or `nil`.
    static func responseProblem(_ http: HTTPURLResponse, request: TransportRequest) -> String? {
        MessageFraming.responseProblem(status: http.statusCode, headers: headers(of: http), version: nil,
                                       request: request)
    }

    /// The header fields of `http` as the caller receives them: without `Transfer-Encoding` (libcurl removed
    /// the framing), and when libcurl decoded the body (a coding in ``URLSessionTransportDelegate/decodedCodings``)
    /// without `Content-Encoding`, with `Content-Length` set to `decodedLength` (the decoded body's size in
    /// bytes) or removed when that is not known yet. Returns the headers and the decoded coding, if any.
    static func deliveredHeaders(of http: HTTPURLResponse,
                                 decodedLength: Int64?) -> (headers: HTTPHeaders, decodedContentEncoding: String?) {
        var headers = headers(of: http)
        headers.remove("Transfer-Encoding")
        guard let coding = headers.first("Content-Encoding"),
              URLSessionTransportDelegate.decodedCodings.contains(coding.lowercased()) else { return (headers, nil) }
        headers.remove("Content-Encoding")
        if let decodedLength {
            headers.set("Content-Length", String(decodedLength))
        } else {
            headers.remove("Content-Length")
        }
        return (headers, coding)
    }

    /// The response head with ``deliveredHeaders(of:decodedLength:)`` (the decoded body's length); a short body is `.truncated`, a head
    /// ``MessageFraming`` refuses is `.invalidResponse`.
    static func response(_ http: HTTPURLResponse, url: URL, received: Int64,
                         request: TransportRequest) -> Result<TransportResponse, TransportError> {
        if let problem = responseProblem(http, request: request) { return .failure(.invalidResponse(problem)) }
        let (headers, decoded) = deliveredHeaders(of: http, decodedLength: received)
        if decoded == nil, let truncation = TransportError.truncation(method: request.method, status: http.statusCode,
                                                                      headers: headers, received: received) {
            return .failure(truncation)
        }
        return .success(TransportResponse(url: url, status: http.statusCode, headers: headers,
                                          bodySize: received, decodedContentEncoding: decoded))
    }

    /// Maps a URLSession error to the transport's classes.
    static func classify(_ error: Error, response: HTTPURLResponse?, received: Int64, expired: Bool,
                         stalled: StallRule? = nil, method: String) -> TransportError {
        guard let urlError = error as? URLError else { return .other(ErrorWords.describe(error)) }
        switch urlError.code {
        case .cancelled:
            if let stalled { return .stalled(minimumBytes: stalled.minimumBytes, seconds: stalled.seconds) }
            return expired ? .timedOut : .cancelled
        case .timedOut: return .timedOut
        default: break
        }
        // A failure after the head arrived with fewer bytes than announced is a truncated body, whatever code
        // libcurl gave it (it reports "transfer closed with n bytes remaining to read" as -1).
        if let response, response.expectedContentLength > received,
           RFC9111.responseHasContent(method: method, status: response.statusCode) {
            return .truncated(expected: response.expectedContentLength, received: received)
        }
        let detail = urlError.localizedDescription + " (\(urlError.code.rawValue))"
        if let truncation = truncation(in: detail, received: received) { return truncation }
        if let problem = framingFailure(in: urlError.localizedDescription) { return .invalidResponse(problem) }
        switch urlError.code {
        case .cannotFindHost, .dnsLookupFailed:
            return .nameNotResolved(detail)
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHasUnknownRoot,
             .serverCertificateNotYetValid:
            return .tlsFailed(detail, certificate: true)
        case .secureConnectionFailed, .clientCertificateRejected, .clientCertificateRequired:
            return .tlsFailed(detail, certificate: false)
        case .cannotConnectToHost, .notConnectedToInternet,
             .cannotLoadFromNetwork, .internationalRoamingOff, .dataNotAllowed,
             .networkConnectionLost, .badServerResponse, .zeroByteResource:
            return .connectionFailed(detail)
        default:
            if response == nil && (urlError.code == .unknown || detail.lowercased().contains("connect")) {
                return .connectionFailed(detail)
            }
            return .other(detail)
        }
    }
}

extension TransportExchange {
    /// libcurl's CURLE_PARTIAL_FILE messages, which FoundationNetworking passes on with code -1 and without
    /// the response: "transfer closed with <n> bytes remaining to read" (Content-Length known) and
    /// "transfer closed with outstanding read data remaining" (a chunked body cut off).
    static func truncation(in message: String, received: Int64) -> TransportError? {
        let text = message.lowercased()
        guard text.contains("transfer closed with") else { return nil }
        if let range = text.range(of: "transfer closed with ") {
            let digits = text[range.upperBound...].prefix { $0.isNumber }
            if let remaining = Int64(digits) {
                return .truncated(expected: received + remaining, received: received)
            }
        }
        return .truncatedChunked(received: received)
    }
}

extension TransportExchange {
    /// libcurl's framing refusals as FoundationNetworking passes them on (code -1, text only): "Invalid
    /// Content-Length: value", "Weird server reply", a header over 100 KB ("... header (max is 102400)!").
    static func framingFailure(in message: String) -> String? {
        let text = message.lowercased()
        if text.contains("invalid content-length") { return "invalid Content-Length" }
        if text.contains("header (max is") || text.contains("too large response headers") {
            return "response header too large"
        }
        if text.contains("weird server reply") { return message }
        return nil
    }
}

/// Carries a URLSessionTask into `@Sendable` closures (URLSessionTask's methods are thread-safe).
struct UncheckedTask: @unchecked Sendable {
    let task: URLSessionTask
}
