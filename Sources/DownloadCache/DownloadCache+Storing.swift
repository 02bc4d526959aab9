import CacheStore
import Foundation
import HTTPCacheSemantics

/// Where one response body is streamed: a private temporary file, moved into a CacheStore body writer only
/// when a large body is stored (small bodies go inline into the index without any store file).
final class BodySink: @unchecked Sendable {
    // @unchecked: used by one exchange at a time; never shared between tasks.
    let fileURL: URL
    private var writer: BodyWriter?

    init(cache: DownloadCache) {
        // The store's tmp/ while usable, else the cache's private directory (the store's directory vanished or
        // became unwritable: the download must still succeed). Only if neither exists: the system temporary
        // directory, under a random name the transport creates.
        let directory = cache.directoryForNewBody() ?? FileManager.default.temporaryDirectory
        fileURL = directory.appendingPathComponent("download-" + UUID().uuidString)
    }

    /// Deletes the body file (transfer failed or the body was not needed).
    func discard() {
        writer?.abort()
        writer = nil
        unlink(fileURL.path)
    }

    /// The body file for a caller that keeps it (a response that was not stored); `nil` when it is gone.
    func keep() -> URL? {
        FileManager.default.fileExists(atPath: fileURL.path) ? fileURL : nil
    }

    /// Moves the body into a new store writer (rename, or copy across file systems) for `commit`.
    /// - Throws: `CacheStoreError` from `makeBodyWriter`, or the file system's error from the move.
    func moveIntoStore(_ store: CacheStore) throws -> BodyWriter {
        let writer = try store.makeBodyWriter()
        if rename(fileURL.path, writer.fileURL.path) != 0 {
            do {
                unlink(writer.fileURL.path)
                try FileManager.default.copyItem(at: fileURL, to: writer.fileURL)
                unlink(fileURL.path)
            } catch {
                writer.abort()
                throw error
            }
        }
        self.writer = writer
        return writer
    }

    /// After a failed commit: takes the body back from the writer's file so the caller still gets it.
    func reclaim() {
        if let writer, FileManager.default.fileExists(atPath: writer.fileURL.path),
           !FileManager.default.fileExists(atPath: fileURL.path) {
            _ = rename(writer.fileURL.path, fileURL.path)
        }
        writer?.abort()
        writer = nil
    }
}

/// When one exchange's request was sent and its response received (RFC 9111 §4.2.3), and its options.
struct ExchangeTiming: Sendable {
    var requestTime: Date
    var responseTime: Date
    var options: RequestOptions
}

extension DownloadCache {
    /// A complete (non-304) response: checks its length, stores it when storable (§3), returns it.
    func complete(_ received: TransportResponse, sink: BodySink, original: CacheRequest, options: RequestOptions,
                  requestTime: Date, responseTime: Date, reason: String) -> Result<CachedResponse, DownloadError> {
        let size = received.bodySize
        let timing = ExchangeTiming(requestTime: requestTime, responseTime: responseTime, options: options)
        if URLSessionTransportDelegate.bodyExpected(method: original.method, status: received.status),
           let text = received.headers.first("Content-Length"), let expected = Int64(text), expected != size {
            sink.discard()
            return .failure(DownloadError(.truncated(expected: expected, received: size)))
        }
        let head = CacheResponse(status: received.status, headers: received.headers)
        let evaluation = evaluationOptions(options)
        let inMemory = size <= Int64(configuration.inMemoryBodyLimit)
        var data: Data?
        if let body = received.inMemoryBody, !inMemory {
            do { try body.write(to: sink.fileURL) } catch {
                return .failure(DownloadError(.storage, "cannot write the downloaded body: \(ErrorWords.describe(error))"))
            }
        }
        if inMemory {
            do { data = try received.inMemoryBody ?? Data(contentsOf: sink.fileURL) } catch {
                sink.discard()
                return .failure(DownloadError(.storage, "cannot read the downloaded body: \(ErrorWords.describe(error))"))
            }
        }
        let storability = options.writeToCache
            ? RFC9111.storability(request: original, response: head, mode: configuration.mode,
                                  ignoreServerCacheControl: options.ignoreServerCacheControl,
                                  targetedFields: configuration.effectiveTargetedFields)
            : .doNotStore(reason: "writing to the cache is off for this request")
        var note: String
        switch storability {
        case .store: note = "stored"
        case .doNotStore(let why): note = "not stored: \(why)"
        }
        if storability.isStorable {
            if let secondary = RFC9111.secondaryKey(vary: head.headers, request: original.headers, secret: keySecret) {
                // Stored without hop-by-hop fields (§3.1); credentials only as keyed hashes; partitioned by them (§3.5).
                let partition = RFC9111.credentialPartition(request: original, response: head, options: evaluation)
                let variant = RFC9111.variantKey(secondaryKey: secondary, credentialPartition: partition)
                let key = StoreKey(primary: RFC9111.primaryKey(method: "GET", url: original.url), variant: variant)
                let stored = StoredResponse(
                    response: CacheResponse(status: head.status, headers: RFC9111.storedHeaders(head.headers)),
                    requestTime: requestTime, responseTime: responseTime,
                    varyingRequestHeaders: RFC9111.varyingRequestHeaders(response: head, request: original.headers,
                                                                         secret: keySecret),
                    requestMethod: "GET", overrideExpiry: options.expiresIn.map { responseTime.addingTimeInterval($0) },
                    slidingLifetime: options.renewExpiryOnHit ? options.expiresIn : nil, credentialPartition: partition)
                let metadata = StoredEntryMetadata(url: original.url.absoluteString, method: "GET",
                                                   statusText: received.statusText, stored: stored)
                var directWriter: BodyWriter?
                do {
                    if let data, data.count <= store.configuration.inlineThreshold {
                        // Small bodies go inline into the index: no blob file, no fsync.
                        try store.store(data, metadata: try metadata.encoded(), for: key,
                                        storageClass: options.storage, pinned: options.pin)
                        sink.discard()
                        return .success(networkResponse(received, original: original, body: .data(data),
                                                        reason: "\(reason); \(note)", blob: nil, timing: timing, stored: true))
                    }
                    let writer: BodyWriter
                    if let data {
                        // A blob-sized body held in memory is written once, through the store's writer: its
                        // crc32 is computed while writing, and no second file, rename or re-read is needed.
                        writer = try store.makeBodyWriter()
                        directWriter = writer
                        try writer.write(data)
                        sink.discard()
                    } else {
                        writer = try sink.moveIntoStore(store)
                    }
                    try store.commit(writer, metadata: try metadata.encoded(), for: key,
                                     storageClass: options.storage, pinned: options.pin)
                    let blob = store.bodyFileURL(for: key)
                    if let data {
                        return .success(networkResponse(received, original: original, body: .data(data),
                                                        reason: "\(reason); \(note)", blob: blob, timing: timing, stored: true))
                    }
                    // Held open at once (the commit remembered it verified: one fstat), so a purge or eviction in
                    // another process before the caller reads the body cannot take the bytes away.
                    if let opened = store.openVerifiedBody(for: key) {
                        var response = networkResponse(received, original: original, body: .file(opened.url),
                                                       reason: "\(reason); \(note)", blob: opened.url, timing: timing,
                                                       stored: true)
                        response.storedBody = opened
                        return .success(response)
                    }
                    if let blob {
                        return .success(networkResponse(received, original: original, body: .file(blob),
                                                        reason: "\(reason); \(note)", blob: blob, timing: timing, stored: true))
                    }
                    if let entry = store.entry(for: key) {
                        return .success(networkResponse(received, original: original, body: .data(entry.body),
                                                        reason: "\(reason); \(note)", blob: nil, timing: timing, stored: true))
                    }
                    return .failure(DownloadError(.storage, "stored body of \(key) vanished right after commit"))
                } catch {
                    configuration.log("cannot store \(original.url.absoluteString): \(ErrorWords.describe(error))")
                    directWriter?.abort()
                    sink.reclaim()
                    note = "not stored: storage error"
                }
            } else {
                note = "not stored: Vary: * never matches"
            }
        }
        if let data {
            sink.discard()
            return .success(networkResponse(received, original: original, body: .data(data),
                                            reason: "\(reason); \(note)", blob: nil, timing: timing))
        }
        guard let file = sink.keep() else {
            return .failure(DownloadError(.storage, "the downloaded body of \(original.url.absoluteString) could not be kept"))
        }
        return .success(networkResponse(received, original: original, body: .file(file),
                                        reason: "\(reason); \(note)", blob: nil, timing: timing))
    }

    /// A response value for a body that came from the network: `age` is its current age as just received
    /// (RFC 9111 §4.2.3, from its `Age` header and the request/response times) and `isFresh` the freshness of
    /// the response as it would be stored (§4.2; unqualified `no-cache` (§5.2.2.4) counts as not fresh).
    func networkResponse(_ received: TransportResponse, original: CacheRequest, body: ResponseBody, reason: String,
                         blob: URL?, timing: ExchangeTiming, stored isStored: Bool = false) -> CachedResponse {
        let stored = StoredResponse(
            response: CacheResponse(status: received.status, headers: received.headers),
            requestTime: timing.requestTime, responseTime: timing.responseTime,
            varyingRequestHeaders: HTTPHeaders(), requestMethod: original.method,
            overrideExpiry: timing.options.expiresIn.map { timing.responseTime.addingTimeInterval($0) },
            slidingLifetime: nil)
        let (age, fresh) = freshness(of: stored, now: timing.responseTime, options: timing.options)
        var response = CachedResponse(url: original.url, status: received.status, statusText: received.statusText,
                                      headers: received.headers, body: body, bodySize: received.bodySize,
                                      source: .network, age: age, isFresh: fresh, reason: reason, storedBodyURL: blob)
        response.interimResponses = received.interimResponses
        let lifetime = RFC9111.freshnessLifetime(stored, options: evaluationOptions(timing.options))
        response.cacheStatus = CacheStatus(hit: false, forward: .miss, forwardStatus: received.status,
                                           ttl: isStored ? CacheStatus.ttl(lifetime: lifetime, age: age) : nil,
                                           stored: isStored)
        return response
    }

    /// Current age (§4.2.3) and freshness (§4.2) of `stored` at `now`; an unqualified response `no-cache`
    /// (§5.2.2.4) makes it not fresh unless the caller overrides the server's cache control or the expiry.
    func freshness(of stored: StoredResponse, now: Date, options: RequestOptions) -> (age: TimeInterval, fresh: Bool) {
        let age = RFC9111.currentAge(stored, now: now)
        var fresh = RFC9111.isFresh(stored, now: now, options: evaluationOptions(options))
        if fresh, stored.overrideExpiry == nil, !options.ignoreServerCacheControl,
           CacheControl.response(stored.response.headers).noCache {
            fresh = false
        }
        return (age, fresh)
    }

    /// HEAD: answered from a stored GET response that may be used without contacting the origin (RFC 9111
    /// §4.1, §4.3.5; `RFC9111.lookupKeys`), else sent to the origin; a 200 answer freshens the stored GET
    /// responses whose validators and length it confirms, and removes those it contradicts.
    func headRequest(_ request: CacheRequest, options: RequestOptions) async throws(DownloadError) -> CachedResponse {
        if options.readFromCache, let hit = headFromStoredGET(request, options: options) { return hit }
        let sink = BodySink(cache: self)
        defer { sink.discard() }
        let requestTime = configuration.now()
        let received = try await send(request, to: sink.fileURL, options: options).mapError { DownloadError($0) }.get()
        let responseTime = configuration.now()
        let head = CacheResponse(status: received.status, headers: received.headers)
        if received.status == 200 {
            var getRequest = request
            getRequest.method = "GET"
            for candidate in candidates(for: getRequest) {
                if let updated = RFC9111.freshenWithHEAD(candidate.metadata.stored, head: head,
                                                         requestTime: requestTime, responseTime: responseTime) {
                    var metadata = candidate.metadata
                    metadata.stored = updated
                    persist(metadata, for: candidate.key)
                } else {
                    // The HEAD's validators or length no longer match: the stored body is outdated.
                    do { try store.remove(candidate.key) } catch {
                        configuration.log("cannot invalidate \(candidate.key): \(ErrorWords.describe(error))")
                    }
                }
            }
        }
        return networkResponse(received, original: request, body: .data(Data()), reason: "HEAD is sent to the origin", blob: nil,
                               timing: ExchangeTiming(requestTime: requestTime, responseTime: responseTime, options: options))
    }

    /// The stored GET response's head as the answer to HEAD `request`, when RFC 9111 lets the GET be served
    /// without any exchange; `nil` otherwise (then HEAD goes to the origin).
    private func headFromStoredGET(_ request: CacheRequest, options: RequestOptions) -> CachedResponse? {
        var getRequest = request
        getRequest.method = "GET"
        guard let candidate = candidates(for: getRequest).first else { return nil }
        let now = configuration.now()
        let stored = candidate.metadata.stored
        guard case .useStored(let reason) = RFC9111.evaluate(request: getRequest, stored: stored, now: now,
                                                            options: evaluationOptions(options)) else {
            return nil
        }
        let (age, fresh) = freshness(of: stored, now: now, options: options)
        var response = CachedResponse(url: request.url, status: stored.response.status,
                                      statusText: candidate.metadata.statusText,
                                      headers: RFC9111.responseHeadersForServing(stored, now: now), body: .data(Data()),
                                      bodySize: 0, source: .cache, age: age, isFresh: fresh,
                                      reason: "HEAD answered from the stored GET response: \(reason)")
        response.cacheStatus = servedCacheStatus(stored, source: .cache, age: age, options: options)
        return response
    }

    /// Unsafe methods (RFC 9111 §4.4): sent to the origin, never cached; a non-error answer invalidates the
    /// stored responses for the target URI and for same-origin Location / Content-Location.
    func unsafeRequest(_ request: CacheRequest, options: RequestOptions) async throws(DownloadError) -> CachedResponse {
        let sink = BodySink(cache: self)
        let requestTime = configuration.now()
        let received: TransportResponse
        do {
            received = try await send(request, to: sink.fileURL, options: options).mapError { DownloadError($0) }.get()
        } catch {
            sink.discard()
            throw error
        }
        let timing = ExchangeTiming(requestTime: requestTime, responseTime: configuration.now(), options: options)
        let head = CacheResponse(status: received.status, headers: received.headers)
        let keys = RFC9111.invalidatedKeys(request: request, response: head)
        for key in keys {
            do { try store.removeAll(forPrimaryKey: key) } catch {
                configuration.log("cannot invalidate \(key): \(ErrorWords.describe(error))")
            }
        }
        await invalidateShared(keys)
        if !keys.isEmpty && eventHub.hasSubscribers { eventHub.send(.invalidated(url: request.url)) }
        if options.writeToCache, RFC9111.postResponseAnswersGET(request: request, response: head, mode: configuration.mode) {
            // RFC 9110 §9.3.3: stored as the response to a GET of the same URI (the usual storability rules apply).
            var asGET = request
            asGET.method = "GET"
            var response = try complete(received, sink: sink, original: asGET, options: options,
                                        requestTime: timing.requestTime, responseTime: timing.responseTime,
                                        reason: "POST response with explicit freshness and Content-Location = its URI (RFC 9110 §9.3.3)").get()
            response.cacheStatus.forward = .method
            return response
        }
        let body: ResponseBody
        if received.bodySize <= Int64(configuration.inMemoryBodyLimit) {
            body = .data(received.inMemoryBody ?? (try? Data(contentsOf: sink.fileURL)) ?? Data())
            sink.discard()
        } else if let inMemory = received.inMemoryBody, (try? inMemory.write(to: sink.fileURL)) != nil,
                  let file = sink.keep() {
            body = .file(file)
        } else if let file = sink.keep() {
            body = .file(file)
        } else {
            throw DownloadError(.storage, "the response body could not be kept")
        }
        var response = networkResponse(received, original: request, body: body,
                                       reason: "\(request.method) is not cacheable (RFC 9111 §4.4)", blob: nil, timing: timing)
        response.cacheStatus.forward = .method
        return response
    }
}
