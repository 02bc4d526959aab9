import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CacheStore
import HTTPCacheSemantics
import SharedTier

/// A `URLCache` subclass backed by DownloadCache's store and RFC 9111 semantics, for code that only knows
/// `URLSession` (set it as the session configuration's `urlCache`, as one plugs in a custom NSURLCache).
///
/// Platform notes:
/// - Apple platforms: set it as `URLSessionConfiguration.urlCache` (or `URLCache.shared`). URLSession asks a
///   cache through the task-based methods — `getCachedResponse(for:completionHandler:)` before a data task
///   loads (when the request's cache policy lets it), `storeCachedResponse(_:for:)` with the data task after
///   it finished, `removeCachedResponse(for:)` with the task — while code written for NSURLCache calls the
///   request-based ones. The task-based store and remove are answered here like the request-based ones (the
///   task's `currentRequest`, else its `originalRequest`, is the request); the lookup is left to URLCache's
///   own `getCachedResponse(for:completionHandler:)`, which asks ``cachedResponse(for:)`` with the task's
///   request. URLSession itself decides whether a response is offered for storing and applies the request's
///   `cachePolicy`; this adapter adds RFC 9111's rules on top. Not compiled or run on Apple platforms here.
/// - Linux (FoundationNetworking): URLSession never stores responses into any URLCache (its HTTP protocol
///   marks every response not cacheable), so the adapter only works when called directly.
/// - Only fresh stored responses are returned (no revalidation: URLCache has no way to send a conditional
///   request); `Vary` is honoured through the secondary key, unlike Foundation's Linux URLCache.
public final class DownloadURLCache: URLCache, @unchecked Sendable {
    // @unchecked: the only state is the immutable, Sendable `cache`; URLCache's own storage is unused.

    /// The cache whose store and semantics back this adapter.
    public let cache: DownloadCache

    /// Creates an adapter over `cache` (the superclass's own memory and disk tiers are disabled: 0 bytes).
    public init(cache: DownloadCache) {
        self.cache = cache
        super.init(memoryCapacity: 0, diskCapacity: 0, diskPath: nil)
    }

    /// The fresh stored response for `request` (RFC 9111 §4), or `nil` (miss, stale, or not a GET).
    public override func cachedResponse(for request: URLRequest) -> CachedURLResponse? {
        guard let cacheRequest = Self.cacheRequest(request), cacheRequest.method == "GET",
              let hit = cache.fastHit(cacheRequest, options: RequestOptions()),
              let data = try? hit.data() else { return nil }
        var fields: [String: String] = [:]
        for field in hit.headers {
            fields[field.name] = fields[field.name].map { $0 + ", " + field.value } ?? field.value
        }
        guard let response = HTTPURLResponse(url: cacheRequest.url, statusCode: hit.status, httpVersion: "HTTP/1.1",
                                             headerFields: fields) else { return nil }
        return CachedURLResponse(response: response, data: data, userInfo: nil, storagePolicy: .allowed)
    }

    /// Stores `cachedResponse` for `request` when RFC 9111 §3 allows it (its storage policy `.notAllowed`
    /// is respected, `.allowedInMemoryOnly` becomes session storage). Storage errors are logged, never thrown.
    public override func storeCachedResponse(_ cachedResponse: CachedURLResponse, for request: URLRequest) {
        guard cachedResponse.storagePolicy != .notAllowed,
              let cacheRequest = Self.cacheRequest(request), cacheRequest.method == "GET",
              let http = cachedResponse.response as? HTTPURLResponse else { return }
        var headers = HTTPHeaders()
        for (name, value) in http.allHeaderFields {
            if let name = name as? String { headers.add(name, "\(value)") }
        }
        let response = CacheResponse(status: http.statusCode, headers: RFC9111.storedHeaders(headers))
        let mode = cache.configuration.mode
        let options = cache.evaluationOptions(RequestOptions())
        guard RFC9111.storability(request: cacheRequest, response: response, mode: mode,
                                  targetedFields: cache.configuration.effectiveTargetedFields).isStorable,
              let secondary = RFC9111.secondaryKey(vary: headers, request: cacheRequest.headers,
                                                   secret: cache.keySecret) else { return }
        let now = cache.configuration.now()
        let stored = RFC9111.makeStoredResponse(request: cacheRequest, response: response, requestTime: now,
                                                responseTime: now, options: options)
        let variant = RFC9111.variantKey(secondaryKey: secondary, credentialPartition: stored.credentialPartition)
        let metadata = StoredEntryMetadata(url: cacheRequest.url.absoluteString, method: "GET",
                                           statusText: HTTPStatusText.text(for: http.statusCode), stored: stored)
        let key = StoreKey(primary: RFC9111.primaryKey(method: "GET", url: cacheRequest.url), variant: variant)
        do {
            try cache.store.store(cachedResponse.data, metadata: try metadata.encoded(), for: key,
                                  storageClass: cachedResponse.storagePolicy == .allowed ? .permanent : .session)
        } catch {
            cache.configuration.log("DownloadURLCache cannot store \(cacheRequest.url.absoluteString): \(ErrorWords.describe(error))")
        }
    }

    /// Removes every stored response for `request`'s URL.
    public override func removeCachedResponse(for request: URLRequest) {
        guard let url = request.url else { return }
        try? cache.removeCachedResponses(for: url)
    }

    /// The request a data task stands for in the calls URLSession makes: its current request (after
    /// redirects), else its original one.
    private static func request(of dataTask: URLSessionDataTask) -> URLRequest? {
        dataTask.currentRequest ?? dataTask.originalRequest
    }

    /// ``storeCachedResponse(_:for:)`` for the data task's request.
    public override func storeCachedResponse(_ cachedResponse: CachedURLResponse, for dataTask: URLSessionDataTask) {
        guard let request = Self.request(of: dataTask) else { return }
        storeCachedResponse(cachedResponse, for: request)
    }

    /// ``removeCachedResponse(for:)`` for the data task's request.
    public override func removeCachedResponse(for dataTask: URLSessionDataTask) {
        guard let request = Self.request(of: dataTask) else { return }
        removeCachedResponse(for: request)
    }

    /// Removes every stored response of the underlying store.
    public override func removeAllCachedResponses() {
        do { try cache.store.removeAll() } catch {
            cache.configuration.log("DownloadURLCache cannot clear the store: \(ErrorWords.describe(error))")
        }
    }

    /// Bytes on disk of the underlying store.
    public override var currentDiskUsage: Int { Int(cache.store.statistics.diskBytes) }

    /// Bytes in the underlying store's memory tier.
    public override var currentMemoryUsage: Int { cache.store.statistics.memoryBytes }

    private static func cacheRequest(_ request: URLRequest) -> CacheRequest? {
        guard let url = request.url else { return nil }
        var headers = HTTPHeaders()
        for (name, value) in request.allHTTPHeaderFields ?? [:] { headers.add(name, value) }
        return CacheRequest(method: (request.httpMethod ?? "GET").uppercased(), url: url, headers: headers)
    }
}
