import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPCacheSemantics
import Synchronization

/// The production ``HTTPTransport`` on Foundation's `URLSession` (FoundationNetworking/libcurl on Linux).
///
/// - URLSession's own cache is off (`urlCache = nil`, `.reloadIgnoringLocalCacheData`), so DownloadCache is
///   the only cache.
/// - Bodies stream into the caller's file through a session-level `URLSessionDataDelegate` (Linux has no
///   `bytes(for:)`); memory stays bounded by one chunk.
/// - Redirects are seen by the session delegate's `willPerformHTTPRedirection` (the per-task delegate's
///   redirect callback is never called on Linux) and followed only when the request allows it.
/// - gzip trap: libcurl decodes gzip/deflate by itself but keeps `Content-Encoding` and the compressed
///   `Content-Length`; the returned headers drop `Content-Encoding` and carry the decoded size instead.
/// - Header fields are read from `allHeaderFields`, which joins repeated fields with ", " on Linux.
public final class URLSessionTransport: HTTPTransport, Sendable {
    private let session: URLSession
    private let delegate: URLSessionTransportDelegate
    private let defaultTimeout: TimeInterval

    /// Creates a transport with its own session.
    /// - Parameters:
    ///   - timeout: idle timeout in seconds for requests that give none (default 60).
    ///   - maxConnectionsPerHost: parallel connections per host (default 6).
    public init(timeout: TimeInterval = 60, maxConnectionsPerHost: Int = 6) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = max(1, maxConnectionsPerHost)
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        let delegate = URLSessionTransportDelegate()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        self.delegate = delegate
        self.defaultTimeout = timeout
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// Sends `request`, streaming the body into `bodyFile`; see ``HTTPTransport/send(_:bodyFile:progress:)``.
    /// - Throws: `TransportError` (`.connectionFailed`, `.timedOut`, `.cancelled`, `.truncated`, `.other`).
    public func send(_ request: TransportRequest, bodyFile: URL,
                     progress: (@Sendable (Int64, Int64?) -> Void)?) async throws(TransportError) -> TransportResponse {
        guard FileManager.default.createFile(atPath: bodyFile.path, contents: nil),
              let handle = try? FileHandle(forWritingTo: bodyFile) else {
            throw TransportError.other("cannot create body file \(bodyFile.path)")
        }
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        urlRequest.timeoutInterval = request.timeout ?? defaultTimeout
        for field in request.headers {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        urlRequest.httpBody = request.body
        let task = session.dataTask(with: urlRequest)
        let taskBox = TaskBox(task: task)
        let delegate = self.delegate
        let result: Result<TransportResponse, TransportError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let state = TransportTaskState(continuation: continuation, file: handle, request: request,
                                               progress: progress)
                delegate.register(state, for: task.taskIdentifier)
                if let total = request.timeout, total > 0 {
                    DispatchQueue.global().asyncAfter(deadline: .now() + total) {
                        delegate.expire(taskIdentifier: taskBox.task.taskIdentifier)
                        taskBox.task.cancel()
                    }
                }
                task.resume()
                if Task.isCancelled { task.cancel() }
            }
        } onCancel: {
            taskBox.task.cancel()
        }
        return try result.get()
    }
}

/// Wraps a task so it can cross into `@Sendable` cancellation closures (URLSessionTask is thread-safe).
private struct TaskBox: @unchecked Sendable {
    let task: URLSessionTask
}

/// Per-task streaming state. `@unchecked Sendable`: registered under the delegate's mutex, then touched only
/// by that task's callbacks, which URLSession delivers serially on the delegate queue.
final class TransportTaskState: @unchecked Sendable {
    let continuation: CheckedContinuation<Result<TransportResponse, TransportError>, Never>
    let file: FileHandle
    let request: TransportRequest
    let progress: (@Sendable (Int64, Int64?) -> Void)?
    var response: HTTPURLResponse?
    var received: Int64 = 0
    var writeError: String?
    var expired = false

    init(continuation: CheckedContinuation<Result<TransportResponse, TransportError>, Never>, file: FileHandle,
         request: TransportRequest, progress: (@Sendable (Int64, Int64?) -> Void)?) {
        self.continuation = continuation
        self.file = file
        self.request = request
        self.progress = progress
    }
}

/// The session delegate: streams each task's body into its file and completes its continuation.
final class URLSessionTransportDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let tasks = Mutex<[Int: TransportTaskState]>([:])

    func register(_ state: TransportTaskState, for identifier: Int) {
        tasks.withLock { $0[identifier] = state }
    }

    func expire(taskIdentifier: Int) {
        tasks.withLock { $0[taskIdentifier]?.expired = true }
    }

    private func state(_ task: URLSessionTask) -> TransportTaskState? {
        tasks.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        state(dataTask)?.response = response as? HTTPURLResponse
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let state = state(dataTask), state.writeError == nil else { return }
        do {
            try state.file.write(contentsOf: data)
            state.received += Int64(data.count)
            state.progress?(state.received, URLSessionTransportDelegate.expectedLength(state))
        } catch {
            state.writeError = "cannot write body file: \(error)"
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        let follow = state(task)?.request.followRedirects ?? false
        completionHandler(follow ? request : nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        guard let state = tasks.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        try? state.file.close()
        state.continuation.resume(returning: URLSessionTransportDelegate.result(state, task: task, error: error))
    }

    private static func expectedLength(_ state: TransportTaskState) -> Int64? {
        guard let response = state.response, response.expectedContentLength >= 0 else { return nil }
        if let coding = response.value(forHTTPHeaderField: "Content-Encoding"), decodedCodings.contains(coding.lowercased()) {
            return nil
        }
        return response.expectedContentLength
    }

    /// Content codings libcurl decodes by itself.
    static let decodedCodings: Set<String> = ["gzip", "x-gzip", "deflate", "br", "zstd"]

    private static func result(_ state: TransportTaskState, task: URLSessionTask,
                               error: Error?) -> Result<TransportResponse, TransportError> {
        if let writeError = state.writeError { return .failure(.other(writeError)) }
        if let error {
            return .failure(mapError(error, state: state))
        }
        guard let response = state.response ?? (task.response as? HTTPURLResponse),
              let url = response.url ?? task.currentRequest?.url else {
            return .failure(.connectionFailed("no HTTP response"))
        }
        var headers = HTTPHeaders()
        let fields = response.allHeaderFields.compactMap { key, value -> (String, String)? in
            guard let name = key as? String else { return nil }
            return (name, "\(value)")
        }.sorted { $0.0.lowercased() < $1.0.lowercased() }
        for (name, value) in fields { headers.add(name, value) }
        headers.remove("Transfer-Encoding")
        var decoded: String?
        if let coding = headers.first("Content-Encoding"), decodedCodings.contains(coding.lowercased()) {
            decoded = coding
            headers.remove("Content-Encoding")
            headers.set("Content-Length", String(state.received))
        } else if bodyExpected(method: state.request.method, status: response.statusCode),
                  let lengthText = headers.first("Content-Length"), let expected = Int64(lengthText),
                  expected != state.received {
            return .failure(.truncated(expected: expected, received: state.received))
        }
        return .success(TransportResponse(url: url, status: response.statusCode, headers: headers,
                                          bodySize: state.received, decodedContentEncoding: decoded))
    }

    /// Whether a response to `method` with `status` carries a body whose length Content-Length states.
    static func bodyExpected(method: String, status: Int) -> Bool {
        !(method.uppercased() == "HEAD" || status == 204 || status == 304 || (100..<200).contains(status))
    }

    private static func mapError(_ error: Error, state: TransportTaskState) -> TransportError {
        guard let urlError = error as? URLError else { return .other("\(error)") }
        switch urlError.code {
        case .cancelled:
            return state.expired ? .timedOut : .cancelled
        case .timedOut:
            return .timedOut
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet,
             .cannotLoadFromNetwork, .internationalRoamingOff, .dataNotAllowed, .secureConnectionFailed:
            return .connectionFailed(urlError.localizedDescription + " (\(urlError.code.rawValue))")
        case .networkConnectionLost, .badServerResponse, .zeroByteResource:
            if let response = state.response, response.expectedContentLength > state.received {
                return .truncated(expected: response.expectedContentLength, received: state.received)
            }
            return .connectionFailed("connection lost (\(urlError.code.rawValue))")
        default:
            return .other(urlError.localizedDescription + " (\(urlError.code.rawValue))")
        }
    }
}
