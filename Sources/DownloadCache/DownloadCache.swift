import CacheStore
import CacheSystem
import Foundation
import Synchronization
import HTTPCacheSemantics
import SharedTier

/// A local, persistent, RFC 9111-correct HTTP cache in front of an ``HTTPTransport``: a download manager with
/// ASIDownloadCache-style policies and an NSURLCache-style memory tier.
///
/// - Decisions come from HTTPCacheSemantics (pure RFC 9111); bytes live in CacheStore (crash-safe).
/// - Identical concurrent requests share one origin exchange (coalescing); at most
///   `maxConcurrentDownloads` exchanges run at once per origin (scheme, host, port).
/// - A storage problem never fails a call: it is logged and the call degrades to the network.
public final class DownloadCache: Sendable {
    /// The settings this cache was created with.
    public let configuration: Configuration
    /// The underlying store. Callers outside the package use the narrow API below (``statistics``,
    /// ``directoryURL``, ``verify(repair:)``, ``entryDescriptions()``, ``purge(_:)``, ...).
    package let store: CacheStore
    let transport: any HTTPTransport
    let coalescer = Coalescer<CachedResponse>()
    let backgroundRevalidations = Coalescer<CachedResponse>()
    let backgroundWork = BackgroundWork()
    let limiters: OriginLimiters
    let eventHub = EventHub<CacheEvent>()
    let progressHub = ProgressHub()
    let metadataCache = MetadataDecodeCache()
    /// The shared tier (Redis) beside the local store; `nil` when `configuration.sharedTier` is `nil`.
    let sharedTier: SharedTier?
    /// The namespace's secret for the keyed hashes that stand for credentials and cookies in stored keys
    /// (`CacheStore.keySecret()`; the empty secret when the index has none), hashed by the platform's crypto library.
    let keySecret: CacheKeySecret
    /// Directory where bodies land before they are stored or handed over: the store's own `tmp/` (same file
    /// system as `blobs/`, so storing is a rename, and emptied by CacheStore's recovery when a process opens the
    /// namespace alone, so a download cut by SIGINT or a crash never lingers); nil when that directory is not
    /// writable (read-only or unavailable cache): then ``privateDownloads`` is used.
    let storeDownloadsDirectory: URL?
    /// A private directory (mkdtemp, 0700, owner checked) in the system temporary directory, made on first use
    /// when the store's `tmp/` cannot be used and removed with its contents by ``close()`` — never a predictable
    /// shared name another user could have created first.
    let privateDownloads = PrivateDirectory(prefix: "dlcache-downloads-", filePrefix: "download-")
    /// Drops or shrinks the store's memory tier on the system's memory notifications (see
    /// `DownloadCache+MemoryPressure.swift`); released with the cache.
    let memoryPressure: MemoryPressureObservers

    /// Opens (or creates) the cache at `<directory>/<namespace>`.
    ///
    /// A store that cannot be opened (a refused or unreadable directory, a full disk, a damaged index in use by
    /// another process) never makes the cache unusable: it works without it (``isCacheAvailable`` is false, every
    /// response comes from the network and nothing is stored) and logs why.
    /// - Throws: `CacheStoreError.Code.invalidNamespace` for a namespace name that is not valid (a caller error).
    public init(configuration: Configuration) throws {
        self.configuration = configuration
        let store = try Self.openStore(configuration)
        self.store = store
        self.transport = configuration.transport ?? Self.defaultTransport(configuration)
        self.limiters = OriginLimiters(limit: configuration.maxConcurrentDownloads)
        self.sharedTier = Self.makeSharedTier(configuration)
        self.keySecret = .library(bytes: store.keySecret() ?? [])
        self.memoryPressure = MemoryPressureObservers(configuration, store: store)
        let storeTemporary = store.directoryURL.appendingPathComponent("tmp", isDirectory: true)
        if !store.isReadOnly, cs_access(storeTemporary.path, 1) == 0 {
            self.storeDownloadsDirectory = storeTemporary
        } else {
            self.storeDownloadsDirectory = nil
        }
    }

    /// The store of `configuration`, or an unavailable one (logged) when it cannot be opened.
    /// - Throws: `CacheStoreError` `.invalidNamespace` only.
    private static func openStore(_ configuration: Configuration) throws(CacheStoreError) -> CacheStore {
        do {
            return try CacheStore(configuration: configuration.storeConfiguration)
        } catch {
            if error.code == .invalidNamespace { throw error }
            configuration.log("cache unavailable, working without it: \(ErrorWords.describe(error))")
            return CacheStore.unavailable(configuration: configuration.storeConfiguration, reason: error.description)
        }
    }

    /// False when the store could not be opened and the cache works without it (see ``init(configuration:)``).
    public var isCacheAvailable: Bool { !store.isUnavailable }

    /// The store's counters: entries and bytes on disk, the memory tier's entries and bytes, hits and misses
    /// (see `CacheStoreStatistics`).
    public var statistics: CacheStoreStatistics { store.statistics }

    /// `<directory>/<namespace>`: where the cache's files live.
    public var directoryURL: URL { store.directoryURL }

    /// Why the cache is read-only (the configuration, or the failed system call), or why it is unavailable;
    /// nil when it is writable.
    public var readOnlyReason: String? { store.readOnlyReason }

    /// Checks every stored entry (body present, size and checksum) and with `repair` deletes the broken ones
    /// (see `CacheStore.verify(repair:)`).
    /// - Returns: what was checked and every problem found.
    public func verify(repair: Bool) -> VerificationReport { store.verify(repair: repair) }

    /// The transport used when the configuration names none: on Linux the libcurl ``CurlTransport`` (exact
    /// header fields, no gzip trap, back-pressured streaming, ≈2× less client CPU per request than
    /// FoundationNetworking's URLSession), elsewhere ``URLSessionTransport``.
    static func defaultTransport(_ configuration: Configuration) -> any HTTPTransport {
        let connections = max(1, configuration.maxConcurrentDownloads)
        #if canImport(CCurl)
        return CurlTransport(maxConnectionsPerHost: connections, trust: configuration.tlsTrust)
        #else
        return URLSessionTransport(maxConnectionsPerHost: connections, trust: configuration.tlsTrust)
        #endif
    }

    /// A new stream of every call's outcome from now on (what a delegate would be told); each call returns its
    /// own stream.
    public var events: AsyncStream<CacheEvent> { eventHub.subscribe() }

    /// A stream of bytes received / expected for downloads of `url`; it finishes when the next download of
    /// `url` completes (it waits for one to start when none is in flight).
    public func progress(for url: URL) -> AsyncStream<DownloadProgress> {
        progressHub.subscribe(url)
    }

    /// The main call: answers `request` from the cache or the origin as RFC 9111 and `options` say.
    ///
    /// GET responses are cached; HEAD freshens stored GET responses (§4.3.5); unsafe methods go to the origin
    /// and invalidate stored responses for the URL (§4.4). A GET with one byte range is answered 206 (or 416)
    /// from a stored response, a fresh one without contacting the origin; several ranges, or a range of a URL
    /// with nothing stored, go to the origin uncached (see `DownloadCache+Ranges.swift`). Redirects are followed hop by hop (each hop cached
    /// under its own key) unless `options.followRedirects` is false. Never throws because of a storage problem.
    /// - Throws: `DownloadError` — `.connectionFailed`/`.timedOut`/`.truncated` when the origin failed and no
    ///   stored response may stand in, `.notCached` when the policy forbids the network and nothing usable is
    ///   stored, `.invalidRequest` (a message-framing field, a Host naming another authority, CR/LF in a field:
    ///   `MessageFraming.requestProblem`), `.invalidResponse` (the origin broke HTTP framing or answered 304/206
    ///   unasked; nothing stored), `.cancelled`, `.invalidURL`, `.tooManyRedirects`, `.storage`, `.other`. A
    ///   failure of a redirect target carries that target in `DownloadError.url`.
    public func response(for request: CacheRequest,
                         options: RequestOptions = RequestOptions()) async throws(DownloadError) -> CachedResponse {
        try await response(for: request, options: options, emitsEvent: true)
    }

    /// ``response(for:options:)``; `emitsEvent` false leaves the event to the caller (prefetch, which reports a
    /// non-2xx answer as `.failed`).
    func response(for request: CacheRequest, options: RequestOptions,
                  emitsEvent: Bool) async throws(DownloadError) -> CachedResponse {
        // RFC 9110 §9.3.1 / §9.3.2: content in a GET or HEAD has no generally defined semantics, so no stored
        // response can be known to answer it: such a request goes to the origin, neither read from the cache nor
        // stored (a plain GET of the URL keeps its stored response).
        let options = options.body?.isEmpty == false && ["GET", "HEAD"].contains(request.method.uppercased())
            ? Self.bypassingCache(options) : options
        do {
            let result = try await answeringRanges(request, options: options) { [self] (request, options) async throws(DownloadError) in
                try await followingRedirects(request, options: options)
            }
            if emitsEvent, eventHub.hasSubscribers {
                eventHub.send(.succeeded(url: request.url, source: result.source, isCachedData: result.isFromCache))
            }
            return result
        } catch {
            if emitsEvent, eventHub.hasSubscribers { eventHub.send(.failed(url: request.url, error: error)) }
            throw error
        }
    }

    /// GET `url` with the default options, optionally choosing how long the stored copy stays fresh.
    /// - Parameter expiration: ``CacheExpiration/server`` (default, RFC 9111 §4.2.1), a fixed or sliding number
    ///   of seconds, or never stale. Only the lifetime is replaced: a response marked `Cache-Control: no-cache`
    ///   (RFC 9111 §5.2.2.4) is still revalidated before every use (downloaded again when it has no validator);
    ///   use ``response(for:options:)`` with `RequestOptions.ignoreServerCacheControl` to override that too.
    /// - Throws: `DownloadError`, as ``response(for:options:)``.
    public func download(_ url: URL, expiration: CacheExpiration = .server) async throws(DownloadError) -> CachedResponse {
        try await response(for: CacheRequest(url: url), options: RequestOptions(expiration: expiration))
    }

    /// Waits until every background revalidation (stale-while-revalidate, RFC 9111 §4.2.4 / RFC 5861) started so
    /// far — and any started while waiting — has finished and stored its result.
    ///
    /// A call that served a stale response returns before its refresh completes; a program about to exit (or to
    /// close the store) calls this first so the refreshed response is not lost. Each refresh is bounded by the
    /// request's `timeout` (or the transport's idle timeout), so this returns once those have run out at the latest.
    public func waitForBackgroundWork() async {
        await backgroundWork.waitUntilIdle()
        // Exchanges whose every caller was cancelled end by themselves (keeping a partial body); wait for them too.
        await coalescer.abandonedFlights.waitUntilIdle()
        await backgroundRevalidations.abandonedFlights.waitUntilIdle()
    }

    /// Closes the cache deterministically: waits for background work (``waitForBackgroundWork()``), then closes
    /// the store (`CacheStore.close()`: access times and counters written, session marker removed, lock released).
    ///
    /// Afterwards calls still work but degrade to the network (every read misses, every write is refused and
    /// logged). Calling it again does nothing more. A command-line tool calls it before exiting.
    public func close() async {
        await waitForBackgroundWork()
        store.close()
        privateDownloads.remove()
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
        if let problem = MessageFraming.requestProblem(method: request.method, url: request.url, headers: request.headers) {
            throw DownloadError(.invalidRequest, problem)
        }
        var current = request
        current.headers = MessageFraming.sentHeaders(request.headers)
        var hopOptions = options
        var hops = 0
        var followed: [RedirectHop] = []
        let limit = max(0, options.maxRedirects ?? configuration.maxRedirects)
        while true {
            let result: CachedResponse
            do {
                result = try await singleHop(current, options: hopOptions)
            } catch {
                // A redirect target's failure is reported under the target's own URL.
                var failure = error
                if hops > 0, failure.url == nil { failure.url = current.url }
                throw failure
            }
            guard options.followRedirects, Self.redirectStatuses.contains(result.status),
                  let location = result.headers.first("Location"),
                  let next = URL(string: location, relativeTo: current.url)?.absoluteURL,
                  let scheme = next.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
                var answer = result
                answer.redirects = followed
                return answer
            }
            hops += 1
            if hops > limit {
                throw DownloadError(.tooManyRedirects, "more than \(limit) \(limit == 1 ? "redirect" : "redirects") followed")
            }
            followed.append(RedirectHop(url: current.url, status: result.status, location: next, source: result.source))
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
        // Credentials and cookies never cross to another origin (scheme, host, port).
        next.headers = RFC9111.redirectHeaders(next.headers, from: request.url, to: url)
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
        // One index read serves the fast path and, while no write is committed meanwhile, the exchange's steps.
        let lookup = options.readsCache ? lookUp(request) : nil
        if let lookup, let hit = fastHit(request, candidates: lookup.candidates, options: options) {
            return hit
        }
        let forward = forwardReason(request, options: options)
        let key = coalescingKey(request, options: options)
        let evaluation = evaluationOptions(options)
        let (outcome, collapsed) = await coalescer.runCollapsing(key: key, operation: { [self] in
            await self.resolveGET(request, options: options, lookup: lookup)
        }, mayShare: { response in
            // A waiter receives another caller's response only when the cache could have stored it and served it
            // to this request (RFC 9111 §3, §3.5, §4.1); otherwise it makes its own request.
            response.source != .network
                || RFC9111.mayShare(response: CacheResponse(status: response.status, headers: response.headers),
                                    obtainedFor: request, with: request, options: evaluation)
        })
        var response = try outcome.get()
        if !response.cacheStatus.hit { response.cacheStatus.forward = forward }
        // Served by another caller's exchange (RFC 9211 §2.6); that caller's response says what it did. The
        // fields a qualified no-cache names were validated for that caller only (RFC 9111 §5.2.2.4), and in a
        // shared cache its cookies are that caller's (§3.1, §7.3).
        if collapsed {
            response.cacheStatus.collapsed = true
            response.headers = RFC9111.headersForAnotherClient(response.headers, mode: evaluation.mode)
            // The interim responses (1xx, e.g. 103 Early Hints) of that exchange were sent to that caller too.
            if evaluation.mode == .shared {
                response.interimResponses = response.interimResponses.map { interim in
                    InterimResponse(status: interim.status, headers: RFC9111.withoutPerClientFields(interim.headers))
                }
            }
        }
        return response
    }

    /// The coalescing key: method, primary cache key, the credential tag (URL user info is not in the primary
    /// key), every request header, and the option fingerprint.
    private func coalescingKey(_ request: CacheRequest, options: RequestOptions) -> String {
        var key = RFC9111.primaryKey(method: "GET", url: request.url)
        key += "\n" + (RFC9111.credentialTag(request, secret: keySecret) ?? "-")
        let fields = request.headers.fields.map { "\($0.name.lowercased()):\($0.value)" }.sorted()
        key += "\n" + fields.joined(separator: "\n") + "\n" + options.coalescingFingerprint
        return key
    }

    /// The semantics options for one request: the configuration's (``Configuration/evaluationOptions(_:)``) with
    /// this namespace's ``keySecret``.
    func evaluationOptions(_ options: RequestOptions) -> EvaluationOptions {
        var evaluation = configuration.evaluationOptions(options)
        evaluation.keySecret = keySecret
        return evaluation
    }
}
