import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPCacheSemantics
import Synchronization
import CacheStore
import SharedTier

/// ``URLSessionTransport``'s GET/HEAD path: one delegate-driven data task per request. A body announced up to
/// `limit` bytes collects in memory and is returned as ``TransportResponse/inMemoryBody``; a larger or
/// unannounced body is appended to the body file chunk by chunk as it arrives, so the origin sees exactly one
/// request whatever the body's size (no second request as a download task).
///
/// A data task is about twice as fast per request as a download task on Linux. Limitation: its chunks reach the
/// delegate with no back-pressure, so while a large body is written the process may buffer chunks libcurl has
/// already received (measured ~150 MB resident for a 200 MB body); ``CurlTransport``, the Linux default, streams
/// with back-pressure.
final class DataExchange: Sendable {
    enum Outcome: Sendable {
        case done(Result<TransportResponse, TransportError>)
    }

    struct State: ExchangeTaskState {
        var task: URLSessionTask?
        var continuation: CheckedContinuation<Outcome, Never>?
        var response: HTTPURLResponse?
        var body = Data()
        /// Whether the body streams into the body file (not announced small).
        var streaming = false
        var written: Int64 = 0
        var writeError: String?
        var expired = false
        var cancelRequested = false
        var resumed = false
        var finished = false
        var stalled = false
        /// Why the response head was refused (``MessageFraming``); the task is then cancelled.
        var responseProblem: String?
        var progress: (@Sendable (Int64, Int64?) -> Void)?
        var head: (@Sendable (TransportResponseHead) -> Void)?
    }

    let request: TransportRequest
    let bodyFile: ResponseBodyFile
    /// Largest announced body (bytes) taken on this path.
    let limit: Int64
    private let state = Mutex(State())

    init(request: TransportRequest, bodyFile: ResponseBodyFile, limit: Int64) {
        self.request = request
        self.bodyFile = bodyFile
        self.limit = limit
    }

    /// Registers, resumes and arms the total timeout.
    func start(_ task: URLSessionTask, continuation: CheckedContinuation<Outcome, Never>,
               delegate: URLSessionTransportDelegate, events: TransportEvents) {
        state.withLock { state in
            state.task = task
            state.continuation = continuation
            state.progress = events.progress
            state.head = events.head
        }
        delegate.register(self, taskIdentifier: task.taskIdentifier)
        armTotalTimeout(task)
        armStallRule(task)
        resume(task)
    }

    /// Runs `body` with the state under the lock (``TaskLifecycleExchange``: timeout, resume, `cancel()`).
    func withTaskState<R: Sendable>(_ body: (inout State) -> R) -> R {
        state.withLock { body(&$0) }
    }

    /// The response head arrived: a head ``MessageFraming`` refuses cancels the task; a body announced small
    /// collects in memory, any other streams to the body file.
    func shouldAllow(_ response: URLResponse) -> Bool {
        let http = response as? HTTPURLResponse
        if let http, let problem = TransportExchange.responseProblem(http, request: request) {
            state.withLock { $0.responseProblem = problem }
            return false
        }
        let status = http?.statusCode ?? 200
        let length = response.expectedContentLength
        let hasBody = RFC9111.responseHasContent(method: request.method, status: status)
        let small = !hasBody || (length >= 0 && length <= limit)
        let (task, report) = state.withLock { state -> (URLSessionTask?, (@Sendable (TransportResponseHead) -> Void)?) in
            state.response = http
            state.streaming = !small
            defer { state.head = nil }
            return state.writeError == nil && !state.finished ? (nil, state.head) : (state.task, nil)
        }
        task?.cancel()
        if let report, let http { report(Self.head(of: http, request: request)) }
        return task == nil
    }

    /// The head of `http` as ``TransportEvents/head`` reports it: the headers ``TransportExchange/response(_:url:received:request:)``
    /// will return, with a coding libcurl decodes removed together with the (then unknown) `Content-Length`.
    static func head(of http: HTTPURLResponse, request: TransportRequest) -> TransportResponseHead {
        let url = http.url ?? request.url
        let (headers, decoded) = TransportExchange.deliveredHeaders(of: http, decodedLength: nil)
        return TransportResponseHead(url: url, status: http.statusCode, headers: headers, decodedContentEncoding: decoded)
    }

    /// A body chunk arrived (delegate queue, in order).
    func append(_ data: Data) {
        let (progress, received, expected) = state.withLock { state -> ((@Sendable (Int64, Int64?) -> Void)?, Int64, Int64?) in
            guard state.writeError == nil, !state.finished else { return (nil, 0, nil) }
            if state.streaming {
                do { try bodyFile.write(data) } catch {
                    state.writeError = "\(error)"
                    return (nil, -1, nil)
                }
                state.written += Int64(data.count)
            } else {
                state.body.append(data)
                state.written = Int64(state.body.count)
            }
            let length = state.response?.expectedContentLength ?? -1
            return (state.progress, state.written, length >= 0 ? length : nil)
        }
        if received < 0 {
            cancel()
            return
        }
        progress?(received, expected)
    }

    /// Answers the caller as if URLSession had completed the cancelled task; its late callbacks find the
    /// exchange finished and change nothing (``TaskLifecycleExchange/abandonAfterCancel()``).
    func abandonAfterCancel() {
        complete(error: URLError(.cancelled))
    }

    /// The task ended: writes the body file and resumes the caller.
    func complete(error: Error?) {
        let (continuation, streaming, writeError, received, response, body, expired, stalled, problem, progress, task)
            = state.withLock { state in
                state.finished = true
                defer { state.continuation = nil; state.body = Data() }
                return (state.continuation, state.streaming, state.writeError, state.written, state.response, state.body,
                        state.expired, state.stalled, state.responseProblem, state.progress, state.task)
            }
        guard let continuation else { return }
        if let problem {
            continuation.resume(returning: .done(.failure(.invalidResponse(problem))))
            return
        }
        if let writeError {
            continuation.resume(returning: .done(.failure(.other(writeError))))
            return
        }
        if let error {
            continuation.resume(returning: .done(.failure(TransportExchange.classify(
                error, response: response, received: received, expired: expired,
                stalled: stalled ? request.stallRule : nil, method: request.method))))
            return
        }
        guard let http = response ?? (task?.response as? HTTPURLResponse),
              let url = http.url ?? task?.currentRequest?.url else {
            continuation.resume(returning: .done(.failure(.connectionFailed("no HTTP response"))))
            return
        }
        var result = TransportExchange.response(http, url: url, received: received, request: request)
        if case .success(var done) = result {
            if !streaming { done.inMemoryBody = body }
            // A body not held in memory is in the file, which exists even when the body is empty.
            if streaming {
                do { try bodyFile.open() } catch {
                    continuation.resume(returning: .done(.failure(error)))
                    return
                }
            }   // small: in memory, the body file stays empty
            result = .success(done)
            progress?(done.bodySize, done.bodySize)
        }
        continuation.resume(returning: .done(result))
    }
}
