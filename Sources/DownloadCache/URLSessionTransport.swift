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
/// - Bodies stream to disk through download tasks and are renamed onto the caller's file. (Linux has no
///   `bytes(for:)`; a data task's delegate receives chunks with no back-pressure, and measured resident memory
///   grew by ~150 MB for a 200 MB body, against ~6 MB for a download task, which libcurl writes to a file.)
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
        guard FileManager.default.createFile(atPath: bodyFile.path, contents: nil) else {
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
        let exchange = TransportExchange(request: request, bodyFile: bodyFile)
        let delegate = self.delegate
        let session = self.session
        let result: Result<TransportResponse, TransportError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // A completion-handler task: libcurl's chunks go straight to a file, with no per-chunk
                // delegate operation (a delegate-driven task buffered ~100 MB for a 200 MB body here).
                let task = session.downloadTask(with: urlRequest) { location, response, error in
                    delegate.unregister(exchange)
                    let outcome = exchange.finish(location: location, response: response, error: error)
                    continuation.resume(returning: outcome)
                }
                exchange.start(task, delegate: delegate, progress: progress)
                if Task.isCancelled { task.cancel() }
            }
        } onCancel: {
            exchange.cancel()
        }
        return try result.get()
    }
}

/// The session delegate: decides redirects per task (the only callback a completion-handler task still
/// sends to it on Linux is the session-level `willPerformHTTPRedirection`).
final class URLSessionTransportDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    private let exchanges = Mutex<[Int: TransportExchange]>([:])

    func register(_ exchange: TransportExchange, taskIdentifier: Int) {
        exchanges.withLock { $0[taskIdentifier] = exchange }
    }

    func unregister(_ exchange: TransportExchange) {
        guard let identifier = exchange.taskIdentifier else { return }
        exchanges.withLock { _ = $0.removeValue(forKey: identifier) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        let follow = exchanges.withLock { $0[task.taskIdentifier] }?.request.followRedirects ?? false
        completionHandler(follow ? request : nil)
    }

    /// Content codings libcurl decodes by itself.
    static let decodedCodings: Set<String> = ["gzip", "x-gzip", "deflate", "br", "zstd"]

    /// Whether a response to `method` with `status` carries a body whose length Content-Length states.
    static func bodyExpected(method: String, status: Int) -> Bool {
        !(method.uppercased() == "HEAD" || status == 204 || status == 304 || (100..<200).contains(status))
    }
}
