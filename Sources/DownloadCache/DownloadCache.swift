@_exported import CacheStore
import Foundation
@_exported import HTTPCacheSemantics

/// A local, persistent, RFC 9111-correct HTTP cache in front of an ``HTTPTransport`` — the seeds'
/// `CachedDownloadManager`, ASIDownloadCache's policies and an NSURLCache-style memory tier, done properly.
///
/// - Decisions come from HTTPCacheSemantics (pure RFC 9111); bytes live in CacheStore (crash-safe).
/// - Identical concurrent requests share one origin exchange (coalescing); at most
///   `maxConcurrentDownloads` exchanges run at once per origin (scheme, host, port).
/// - A storage problem never fails a call: it is logged and the call degrades to the network.
public final class DownloadCache: Sendable {
    /// The settings this cache was created with.
    public let configuration: Configuration
    /// The underlying store, for inspection (CLI ls/stats/verify) and maintenance.
    public let store: CacheStore
    let transport: any HTTPTransport
    let coalescer = Coalescer<CachedResponse>()
    let backgroundRevalidations = Coalescer<CachedResponse>()
    let backgroundWork = BackgroundWork()
    let limiters: OriginLimiters
    let eventHub = EventHub<CacheEvent>()
    let progressHub = ProgressHub()
    let metadataCache = MetadataDecodeCache()
    /// Directory where bodies land before they are stored or handed over: the store's own `tmp/` (same file
    /// system as `blobs/`, so storing is a rename, and emptied by CacheStore's recovery when a process opens the
    /// namespace alone, so a download cut by SIGINT or a crash never lingers). Only when that directory is not
    /// writable (read-only cache) the per-user system temp folder `dlcache-downloads-<uid>` (0700) is used.
    /// Bodies that were not stored and are too large to return in memory stay here, owned by the caller.
    let downloadsDirectory: URL

    /// Opens (or creates) the cache at `<directory>/<namespace>`.
    /// - Throws: `CacheStoreError` when the store cannot be opened at all (e.g. `.invalidNamespace`,
    ///   `.permissionDenied`); a store that opens but misbehaves later only degrades calls to the network.
    public init(configuration: Configuration) throws {
        self.configuration = configuration
        self.store = try CacheStore(configuration: configuration.storeConfiguration)
        self.transport = configuration.transport ?? Self.defaultTransport(configuration)
        self.limiters = OriginLimiters(limit: configuration.maxConcurrentDownloads)
        let storeTemporary = store.directoryURL.appendingPathComponent("tmp", isDirectory: true)
        if access(storeTemporary.path, W_OK | X_OK) == 0 {
            self.downloadsDirectory = storeTemporary
        } else {
            self.downloadsDirectory = Self.systemDownloadsDirectory
            _ = mkdir(downloadsDirectory.path, 0o700)
        }
    }

    /// The per-user fallback download folder in the system temp directory, used when the store's `tmp/` is
    /// not writable (read-only cache, directory removed while running).
    static var systemDownloadsDirectory: URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-downloads-\(getuid())", isDirectory: true)
    }

    /// The transport used when the configuration names none: on Linux the libcurl ``CurlTransport`` (exact
    /// header fields, no gzip trap, back-pressured streaming, ≈2× less client CPU per request than
    /// FoundationNetworking's URLSession), elsewhere ``URLSessionTransport``.
    static func defaultTransport(_ configuration: Configuration) -> any HTTPTransport {
        let connections = max(1, configuration.maxConcurrentDownloads)
        #if canImport(CCurl)
        return CurlTransport(maxConnectionsPerHost: connections)
        #else
        return URLSessionTransport(maxConnectionsPerHost: connections)
        #endif
    }

    /// A new stream of every call's outcome from now on (the seeds' delegate); each call returns its own stream.
    public var events: AsyncStream<CacheEvent> { eventHub.subscribe() }

    /// A stream of bytes received / expected for downloads of `url`; it finishes when the next download of
    /// `url` completes (it waits for one to start when none is in flight).
    public func progress(for url: URL) -> AsyncStream<DownloadProgress> {
        progressHub.subscribe(url)
    }

    /// The main call: answers `request` from the cache or the origin as RFC 9111 and `options` say.
    ///
    /// GET responses are cached; HEAD freshens stored GET responses (§4.3.5); unsafe methods go to the origin
    /// and invalidate stored responses for the URL (§4.4). Redirects are followed hop by hop (each hop cached
    /// under its own key) unless `options.followRedirects` is false. Never throws because of a storage problem.
    /// - Throws: `DownloadError` — `.connectionFailed`/`.timedOut`/`.truncated` when the origin failed and no
    ///   stored response may stand in, `.notCached` when the policy forbids the network and nothing usable is
    ///   stored, `.cancelled`, `.invalidURL`, `.tooManyRedirects`, `.storage`, `.other`.
    public func response(for request: CacheRequest,
                         options: RequestOptions = RequestOptions()) async throws(DownloadError) -> CachedResponse {
        try await response(for: request, options: options, emitsEvent: true)
    }

    /// ``response(for:options:)``; `emitsEvent` false leaves the event to the caller (prefetch, which reports a
    /// non-2xx answer as `.failed`).
    func response(for request: CacheRequest, options: RequestOptions,
                  emitsEvent: Bool) async throws(DownloadError) -> CachedResponse {
        do {
            let result = try await followingRedirects(request, options: options)
            if emitsEvent, eventHub.hasSubscribers {
                eventHub.send(.succeeded(url: request.url, source: result.source, isCachedData: result.isFromCache))
            }
            return result
        } catch {
            if emitsEvent, eventHub.hasSubscribers { eventHub.send(.failed(url: request.url, error: error)) }
            throw error
        }
    }

    /// The seeds' `CachedDownloadManager` call: GET `url`, optionally overriding the server's lifetime.
    /// - Parameters:
    ///   - expiresIn: seconds the stored copy stays fresh, replacing the server's lifetime; `nil` = server's.
    ///     Only the lifetime is replaced: a response marked `Cache-Control: no-cache` (RFC 9111 §5.2.2.4) is still
    ///     revalidated before every use (downloaded again when it has no validator); use
    ///     ``response(for:options:)`` with `RequestOptions.ignoreServerCacheControl` to override that too
    ///     (see `RequestOptions.expiresIn`).
    ///   - renewExpiryOnHit: sliding expiry: each hit renews the expiry to now + `expiresIn`.
    /// - Throws: `DownloadError`, as ``response(for:options:)``.
    public func download(_ url: URL, expiresIn seconds: TimeInterval? = nil,
                         renewExpiryOnHit: Bool = false) async throws(DownloadError) -> CachedResponse {
        try await response(for: CacheRequest(url: url),
                           options: RequestOptions(expiresIn: seconds, renewExpiryOnHit: renewExpiryOnHit))
    }

    /// Waits until every background revalidation (stale-while-revalidate, RFC 9111 §4.2.4 / RFC 5861) started so
    /// far — and any started while waiting — has finished and stored its result.
    ///
    /// A call that served a stale response returns before its refresh completes; a program about to exit (or to
    /// close the store) calls this first so the refreshed response is not lost. Each refresh is bounded by the
    /// request's `timeout` (or the transport's idle timeout), so this returns once those have run out at the latest.
    public func waitForBackgroundWork() async {
        await backgroundWork.waitUntilIdle()
    }

    /// Closes the cache deterministically: waits for background work (``waitForBackgroundWork()``), then closes
    /// the store (`CacheStore.close()`: access times and counters written, session marker removed, lock released).
    ///
    /// Afterwards calls still work but degrade to the network (every read misses, every write is refused and
    /// logged). Calling it again does nothing more. A command-line tool calls it before exiting.
    public func close() async {
        await waitForBackgroundWork()
        store.close()
    }

    /// Pins or unpins every stored response for GET `url` (pinned entries are never evicted by limits or age).
    /// - Throws: `DownloadError.storage` when the store refuses.
    public func setPinned(_ pinned: Bool, for url: URL) throws(DownloadError) {
        do {
            try store.setPinned(pinned, forPrimaryKey: RFC9111.primaryKey(method: "GET", url: url))
        } catch {
            throw DownloadError(.storage, "cannot pin \(url.absoluteString): \(ErrorWords.describe(error))")
        }
    }

    /// Removes every stored response for GET `url`.
    /// - Throws: `DownloadError.storage` when the store refuses.
    public func removeCachedResponses(for url: URL) throws(DownloadError) {
        do {
            try store.removeAll(forPrimaryKey: RFC9111.primaryKey(method: "GET", url: url))
        } catch {
            throw DownloadError(.storage, "cannot remove \(url.absoluteString): \(ErrorWords.describe(error))")
        }
    }

    // MARK: - Redirects

    private static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Performs `request` hop by hop; each hop goes through the cache under its own key.
    private func followingRedirects(_ request: CacheRequest,
                                    options: RequestOptions) async throws(DownloadError) -> CachedResponse {
        guard let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              request.url.host != nil else {
            throw DownloadError(.invalidURL, "not an absolute http(s) URL: \(request.url.absoluteString)")
        }
        if let port = request.url.port, !(1...65_535).contains(port) {
            throw DownloadError(.invalidURL, "port \(port) is outside 1...65535: \(request.url.absoluteString)")
        }
        var current = request
        var hopOptions = options
        var hops = 0
        while true {
            let result = try await singleHop(current, options: hopOptions)
            guard options.followRedirects, Self.redirectStatuses.contains(result.status),
                  let location = result.headers.first("Location"),
                  let next = URL(string: location, relativeTo: current.url)?.absoluteURL,
                  let scheme = next.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
                return result
            }
            hops += 1
            if hops > configuration.maxRedirects {
                throw DownloadError(.tooManyRedirects, "more than \(configuration.maxRedirects) redirects from \(request.url.absoluteString)")
            }
            current = Self.redirected(current, to: next, status: result.status, options: &hopOptions)
        }
    }

    /// The request for the next hop (RFC 9110 §15.4: 303, and 301/302 after POST, become GET without content).
    private static func redirected(_ request: CacheRequest, to url: URL, status: Int,
                                   options: inout RequestOptions) -> CacheRequest {
        let method = request.method.uppercased()
        var next = request
        next.url = url
        if (status == 303 && method != "HEAD") || ((status == 301 || status == 302) && method == "POST") {
            next.method = "GET"
            options.body = nil
            next.headers.remove("Content-Type")
            next.headers.remove("Content-Length")
        }
        if request.url.host?.lowercased() != url.host?.lowercased() {
            next.headers.remove("Authorization")
            next.headers.remove("Cookie")
        }
        return next
    }

    /// One hop: dispatches on the method.
    private func singleHop(_ request: CacheRequest, options: RequestOptions) async throws(DownloadError) -> CachedResponse {
        switch request.method.uppercased() {
        case "GET":
            return try await cachedGET(request, options: options)
        case "HEAD":
            return try await headRequest(request, options: options)
        default:
            return try await unsafeRequest(request, options: options)
        }
    }

    /// GET through the cache: a fresh stored response is served at once; anything needing the origin is
    /// coalesced with identical in-flight requests.
    private func cachedGET(_ request: CacheRequest, options: RequestOptions) async throws(DownloadError) -> CachedResponse {
        if options.readFromCache, let hit = fastHit(request, options: options) {
            return hit
        }
        let key = coalescingKey(request, options: options)
        let outcome = await coalescer.run(key: key) { [self] in
            await self.resolveGET(request, options: options)
        }
        return try outcome.get()
    }

    /// The coalescing key: method, primary cache key, every request header, and the option fingerprint.
    private func coalescingKey(_ request: CacheRequest, options: RequestOptions) -> String {
        var key = RFC9111.primaryKey(method: "GET", url: request.url)
        let fields = request.headers.fields.map { "\($0.name.lowercased()):\($0.value)" }.sorted()
        key += "\n" + fields.joined(separator: "\n") + "\n" + options.coalescingFingerprint
        return key
    }
}
