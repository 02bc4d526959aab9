import Foundation
#if canImport(Security)
import Security
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPCacheSemantics
import Synchronization
import CacheStore
import SharedTier

/// The production ``HTTPTransport`` on Foundation's `URLSession` (FoundationNetworking/libcurl on Linux).
///
/// - URLSession's own cache is off (`urlCache = nil`, `.reloadIgnoringLocalCacheData`), so DownloadCache is
///   the only cache.
/// - GET and HEAD use one data task each (one origin request per call): bodies announced up to
///   `smallBodyLimit` are returned in memory, larger or unannounced ones are appended to the caller's file as
///   chunks arrive. Limitation: Linux has no `bytes(for:)` and a data task's delegate gets chunks with no
///   back-pressure, so resident memory may grow while a large body is written (~150 MB measured for 200 MB);
///   use ``CurlTransport`` (the Linux default) for large downloads. Other methods use a download task, which
///   libcurl writes to a file (~6 MB resident for 200 MB).
/// - Redirects are seen by the session delegate's `willPerformHTTPRedirection` (the per-task delegate's
///   redirect callback is never called on Linux) and followed only when the request allows it.
/// - Content codings: a request without `Accept-Encoding` is sent with `Accept-Encoding: identity`, so nothing
///   is compressed that the caller did not ask for (URLSession would otherwise ask for and decode gzip, deflate,
///   br). When the caller asks, the gzip trap applies: libcurl decodes gzip/deflate by itself but keeps
///   `Content-Encoding` and the compressed `Content-Length`; the returned headers drop `Content-Encoding` and
///   carry the decoded size instead.
/// - Header fields are read from `allHeaderFields`, which joins repeated fields with ", " on Linux.
/// - Framing (``MessageFraming``): caller fields that frame the message are refused before anything is sent
///   (``TransportError/invalidRequest(_:)``); a response head with an invalid or conflicting Content-Length,
///   Transfer-Encoding with Content-Length, or an unsolicited 304 / 206 fails with
///   ``TransportError/invalidResponse(_:)`` (checked on the joined fields URLSession exposes).
/// - Stalls: the request's ``StallRule`` is checked once per window on the task's byte counts; a stalled
///   task is cancelled and fails with ``TransportError/stalled(minimumBytes:seconds:)``.
/// - IPv6 literal hosts (`http://[::1]:8080/`) fail in FoundationNetworking with NSURLErrorBadURL (-1000)
///   (swift-corelibs-foundation issue #5496, fixed upstream by PR #5498, not in this toolchain); off Darwin such
///   URLs are refused with a clear `.other` error instead. ``CurlTransport`` handles them.
public final class URLSessionTransport: HTTPTransport, Sendable {
    private let session: URLSession
    private let delegate: URLSessionTransportDelegate
    private let defaultTimeout: TimeInterval
    /// Bytes: GET/HEAD bodies announced up to this size are returned in memory; larger or unannounced ones are
    /// written to the body file as they arrive (same single request).
    public let smallBodyLimit: Int64
    /// The certificates trusted for `https://` origins. On Apple platforms the server-trust challenge is
    /// answered with it; FoundationNetworking delivers no such challenge, so off Apple platforms an `https://`
    /// request with anything but ``TLSTrust/system`` fails with `.tlsFailed` (use ``CurlTransport`` there).
    public let trust: TLSTrust

    /// Creates a transport with its own session.
    /// - Parameters:
    ///   - timeout: idle timeout in seconds for requests that give none (default 60).
    ///   - maxConnectionsPerHost: parallel connections per host (default 6).
    ///   - smallBodyLimit: bytes; GET/HEAD bodies announced up to this size are returned in memory, larger or
    ///     unannounced ones are written to the body file by the same data task (default 1 MiB).
    ///   - trust: the certificates trusted for `https://` (default: the system's, verified).
    public init(timeout: TimeInterval = 60, maxConnectionsPerHost: Int = 6, smallBodyLimit: Int64 = 1 << 20,
                trust: TLSTrust = .system) {
        self.smallBodyLimit = smallBodyLimit
        self.trust = trust
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = max(1, maxConnectionsPerHost)
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        let delegate = URLSessionTransportDelegate(trust: trust)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        self.delegate = delegate
        self.defaultTimeout = timeout
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// Sends `request`, streaming the body into `bodyFile`; see ``HTTPTransport/send(_:bodyFile:events:)``.
    /// GET and HEAD report the head when the data task's response arrives (before the body); other methods (a
    /// download task, which exposes no early head) report it when the exchange completes, just before returning.
    /// - Throws: `TransportError` (`.connectionFailed`, `.timedOut`, `.stalled`, `.cancelled`, `.truncated`,
    ///   `.invalidRequest`, `.invalidResponse`, `.other`).
    public func send(_ request: TransportRequest, bodyFile: ResponseBodyFile,
                     events: TransportEvents) async throws(TransportError) -> TransportResponse {
        let progress = events.progress
        #if !canImport(Darwin)
        if let host = request.url.host, host.contains(":") {
            throw TransportError.other("IPv6 literal host \(host): FoundationNetworking's URLSession cannot connect to "
                                       + "it (swift-corelibs-foundation #5496); use CurlTransport")
        }
        if !trust.isSystemDefault, request.url.scheme?.lowercased() == "https" {
            throw TransportError.tlsFailed("FoundationNetworking's URLSession cannot use a trust setting other than "
                                           + "the system's; use CurlTransport", certificate: true)
        }
        #endif
        if let problem = MessageFraming.requestProblem(method: request.method, url: request.url, headers: request.headers) {
            throw TransportError.invalidRequest(problem)
        }
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        urlRequest.timeoutInterval = request.timeout ?? defaultTimeout
        for field in MessageFraming.sentHeaders(request.headers) {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        // URLSession asks for every coding it can decode (FoundationNetworking: "deflate, gzip, br, zstd") and
        // decodes behind the caller's back; a caller that asked for no coding gets the identity representation,
        // as CurlTransport sends no Accept-Encoding and decodes nothing (RFC 9110 §12.5.3).
        if !request.headers.contains("Accept-Encoding") {
            urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        }
        urlRequest.httpBody = request.body
        let delegate = self.delegate
        let session = self.session
        let method = request.method.uppercased()
        if method == "GET" || method == "HEAD" {
            // One data task: small bodies in memory, large or unannounced ones streamed to `bodyFile`.
            let small = DataExchange(request: request, bodyFile: bodyFile, limit: smallBodyLimit)
            let outcome: DataExchange.Outcome = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let task = session.dataTask(with: urlRequest)
                    small.start(task, continuation: continuation, delegate: delegate, events: events)
                }
            } onCancel: {
                small.cancel()
            }
            switch outcome {
            case .done(let result): return try result.get()
            }
        }
        try bodyFile.open()   // the download task's body is copied into it; it exists even for an empty body
        let exchange = TransportExchange(request: request, bodyFile: bodyFile)
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
        let response = try result.get()
        events.head?(response.head)
        return response
    }
}

/// An exchange the session delegate routes callbacks to.
protocol RoutedExchange: AnyObject, Sendable {
    var request: TransportRequest { get }
}

extension TransportExchange: TaskLifecycleExchange {}
extension DataExchange: TaskLifecycleExchange {}

/// The session delegate: decides redirects per task, and drives the data-task fast path (response head,
/// chunks, completion). Completion-handler download tasks only use its redirect callback.
final class URLSessionTransportDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let exchanges = Mutex<[Int: any RoutedExchange]>([:])
    /// The certificates trusted for `https://`; consulted by the server-trust challenge on Apple platforms.
    let trust: TLSTrust

    init(trust: TLSTrust = .system) {
        self.trust = trust
        super.init()
    }

    #if canImport(Darwin) && canImport(Security)
    /// The server-trust challenge: the system's evaluation for ``TLSTrust/system``; any certificate when
    /// `verifiesPeer` is false; else the chain evaluated against the CA file's (and directory's) certificates
    /// as the only anchors, with the host name checked by the default SSL policy. A chain those anchors do
    /// not accept goes to the system's evaluation, so a refusal surfaces as the system's certificate error
    /// (`.tlsFailed`, certificate) rather than as a cancelled task; unlike libcurl's CAINFO, a certificate
    /// the system trusts is then still accepted.
    func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
              let serverTrust = challenge.protectionSpace.serverTrust, !trust.isSystemDefault else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        guard trust.verifiesPeer else {
            completionHandler(.useCredential, URLCredential(trust: serverTrust))
            return
        }
        let anchors = trust.anchorCertificates().compactMap { SecCertificateCreateWithData(nil, $0 as CFData) }
        var error: CFError?
        if !anchors.isEmpty, SecTrustSetAnchorCertificates(serverTrust, anchors as CFArray) == errSecSuccess,
           SecTrustSetAnchorCertificatesOnly(serverTrust, true) == errSecSuccess,
           SecTrustEvaluateWithError(serverTrust, &error) {
            completionHandler(.useCredential, URLCredential(trust: serverTrust))
        } else {
            completionHandler(.performDefaultHandling, nil)
        }
    }
    #endif

    func register(_ exchange: any RoutedExchange, taskIdentifier: Int) {
        exchanges.withLock { $0[taskIdentifier] = exchange }
    }

    func unregister(_ exchange: TransportExchange) {
        guard let identifier = exchange.taskIdentifier else { return }
        exchanges.withLock { _ = $0.removeValue(forKey: identifier) }
    }

    private func dataExchange(_ task: URLSessionTask) -> DataExchange? {
        exchanges.withLock { $0[task.taskIdentifier] } as? DataExchange
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        let follow = exchanges.withLock { $0[task.taskIdentifier] }?.request.followRedirects ?? false
        completionHandler(follow ? request : nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        let allow = dataExchange(dataTask)?.shouldAllow(response) ?? true
        completionHandler(allow ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        dataExchange(dataTask)?.append(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        guard let exchange = exchanges.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) as? DataExchange else {
            return
        }
        exchange.complete(error: error)
    }

    /// Content codings libcurl decodes by itself.
    static let decodedCodings: Set<String> = ["gzip", "x-gzip", "deflate", "br", "zstd"]
}
