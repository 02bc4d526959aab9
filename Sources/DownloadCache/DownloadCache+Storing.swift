import CacheStore
import Foundation
import HTTPCacheSemantics
import SharedTier

/// When one exchange's request was sent and its response received (RFC 9111 §4.2.3), and its options.
struct ExchangeTiming: Sendable {
    var requestTime: Date
    var responseTime: Date
    var options: RequestOptions
}

extension DownloadCache {
    /// A complete (non-304) response: checks its length, stores it when storable (§3), returns it.
    func complete(_ received: TransportResponse, sink: BodySink, original: CacheRequest, options: RequestOptions,
                  requestTime: Date, responseTime: Date, reason: String) async -> Result<CachedResponse, DownloadError> {
        let size = received.bodySize
        let timing = ExchangeTiming(requestTime: requestTime, responseTime: responseTime, options: options)
        let head = CacheResponse(status: received.status, headers: received.headers)
        if let truncation = TransportError.truncation(method: original.method, status: received.status,
                                                      headers: received.headers, received: size) {
            sink.discard()
            return .failure(DownloadError(truncation))
        }
        let data: Data?
        switch heldBody(received, sink: sink) {
        case .success(let held): data = held
        case .failure(let error): return .failure(error)
        }
        var storability = options.writeToCache
            ? RFC9111.storability(request: original, response: head, mode: configuration.mode,
                                  ignoreServerCacheControl: options.ignoreServerCacheControl,
                                  targetedFields: configuration.effectiveTargetedFields)
            : .doNotStore(reason: "writing to the cache is off for this request")
        var note: String
        switch storability {
        case .store: note = "stored"
        case .doNotStore(let why): note = "not stored: \(why)"
        }
        if storability.isStorable, let limit = store.configuration.entryByteLimit, size > limit {
            // Delivered, not stored: nothing is evicted to make room for a body over the per-entry limit.
            storability = .doNotStore(reason: "body of \(size) bytes is over the \(limit)-byte \(Self.entryLimitWords)")
            note = "not stored: body of \(size) bytes is over the \(limit)-byte \(Self.entryLimitWords)"
        }
        if storability.isStorable {
            if let secondary = RFC9111.secondaryKey(vary: head.headers, request: original.headers, secret: keySecret) {
                let stored = storedResponse(received, request: original, timing: timing)
                let variant = RFC9111.variantKey(secondaryKey: secondary, credentialPartition: stored.credentialPartition)
                let key = StoreKey(primary: RFC9111.primaryKey(method: "GET", url: original.url), variant: variant)
                let metadata = StoredEntryMetadata(url: original.url.absoluteString, method: "GET",
                                                   statusText: received.statusText, stored: stored)
                do {
                    let bodyFile = try await commit(data, sink: sink, metadata: metadata, key: key, options: options)
                    return storedNetworkResponse(received, original: original, data: data, bodyFile: bodyFile,
                                                 key: key, reason: "\(reason); \(note)", timing: timing)
                } catch let error as CacheStoreError where error.code == .entryTooLarge {
                    // Refused by its commit, before anything was committed or evicted: it does not fit beside the
                    // pinned entries (storing it would evict every unpinned entry and then itself). Delivered
                    // uncached, like a body over the entry limit.
                    sink.reclaim()
                    note = "not stored: \(error.detail)"
                } catch {
                    configuration.log("cannot store \(original.url.absoluteString): \(ErrorWords.describe(error))")
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

    /// The words of a response's `reason` that say its body was not stored because it does not fit beside the
    /// pinned entries (matched by the CLI's notice).
    public static let pinnedRoomWords = CacheStore.pinnedRoomWords

    /// The body as the caller gets it: in memory (`Data`) when at most `inMemoryBodyLimit` bytes, else `nil` with
    /// the bytes in the sink's file (a larger body the transport held in memory is written there).
    private func heldBody(_ received: TransportResponse, sink: BodySink) -> Result<Data?, DownloadError> {
        guard received.bodySize <= Int64(configuration.inMemoryBodyLimit) else {
            if let body = received.inMemoryBody {
                do { try sink.write(body) } catch {
                    return .failure(DownloadError(.storage, "cannot write the downloaded body: \(ErrorWords.describe(error))"))
                }
            }
            return .success(nil)
        }
        do {
            return .success(try received.inMemoryBody ?? sink.read())
        } catch {
            sink.discard()
            return .failure(DownloadError(.storage, "cannot read the downloaded body: \(ErrorWords.describe(error))"))
        }
    }

    /// The stored response to persist (RFC 9111 §3): the fields without hop-by-hop ones (§3.1), credentials only
    /// as keyed hashes and partitioned by them (§3.5), the caller's expiry (``RFC9111/makeStoredResponse``).
    func storedResponse(_ received: TransportResponse, request: CacheRequest, timing: ExchangeTiming) -> StoredResponse {
        var asGET = request
        asGET.method = "GET"
        let options = timing.options
        return RFC9111.makeStoredResponse(
            request: asGET,
            response: CacheResponse(status: received.status, headers: RFC9111.storedHeaders(received.headers)),
            requestTime: timing.requestTime, responseTime: timing.responseTime, options: evaluationOptions(options),
            slidingLifetime: options.expiration.slidingLifetime)
    }

    /// Commits the body under `key`: `data` when held in memory, else the sink's file, moved without a copy.
    /// The store decides whether it goes inline into the index or into a blob file; a body in memory is committed
    /// by the store's commit writer, in one transaction with the bodies other tasks store meanwhile.
    /// - Returns: for `data`, the blob file it was stored in (nil when inline); nil for the sink's file.
    /// - Throws: `CacheStoreError` from the store, or the file system's error from moving the sink's file.
    private func commit(_ data: Data?, sink: BodySink, metadata: StoredEntryMetadata, key: StoreKey,
                        options: RequestOptions) async throws -> URL? {
        let encoded = try metadata.encoded()
        if let data {
            let stored = try await store.storeReturningBodyFile(data, metadata: encoded, for: key,
                                                          storageClass: options.storage, pinned: options.pin)
            sink.discard()
            return stored.bodyFile
        }
        let writer = try sink.moveIntoStore(store)
        try store.commit(writer, metadata: encoded, for: key, storageClass: options.storage, pinned: options.pin)
        return nil
    }

    /// The response for a body just stored under `key`: `data` when held in memory, else the stored body. A body
    /// in a blob file is held open at once (the commit remembered it verified: one fstat), so a purge or
    /// eviction in another process before the caller reads it cannot take the bytes away.
    /// `bodyFile`: the blob file `data` was just stored in (nil when it went inline into the index).
    private func storedNetworkResponse(_ received: TransportResponse, original: CacheRequest, data: Data?,
                                       bodyFile: URL?, key: StoreKey, reason: String,
                                       timing: ExchangeTiming) -> Result<CachedResponse, DownloadError> {
        // The body in memory was just committed: its blob file is known without reading the index again, and
        // the answer is not a use of the entry (no hit counted, no access time written).
        if let data {
            return .success(networkResponse(received, original: original, body: .data(data), reason: reason,
                                            blob: bodyFile, timing: timing, stored: true))
        }
        // Reading back what was just stored is not a use: no hit counted (`dlcache stats`), no access time.
        if let opened = store.openVerifiedBody(for: key, recordsUse: false) {
            var response = networkResponse(received, original: original, body: .file(opened.url), reason: reason,
                                           blob: opened.url, timing: timing, stored: true)
            response.storedBody = opened
            return .success(response)
        }
        if let blob = store.bodyFileURL(for: key) {
            return .success(networkResponse(received, original: original, body: .file(blob), reason: reason,
                                            blob: blob, timing: timing, stored: true))
        }
        if let entry = store.peekEntry(for: key) {
            return .success(networkResponse(received, original: original, body: .data(entry.body), reason: reason,
                                            blob: nil, timing: timing, stored: true))
        }
        return .failure(DownloadError(.storage, "stored body of \(key) vanished right after commit"))
    }

    /// A response value for a body that came from the network: `age` is its current age as just received
    /// (RFC 9111 §4.2.3, from its `Age` header and the request/response times) and `isFresh` the freshness of
    /// the response as it would be stored (``RFC9111/reportedFreshness(_:now:options:)``).
    func networkResponse(_ received: TransportResponse, original: CacheRequest, body: ResponseBody, reason: String,
                         blob: URL?, timing: ExchangeTiming, stored isStored: Bool = false) -> CachedResponse {
        let evaluation = evaluationOptions(timing.options)
        let stored = RFC9111.makeStoredResponse(
            request: original, response: CacheResponse(status: received.status, headers: received.headers),
            requestTime: timing.requestTime, responseTime: timing.responseTime, options: evaluation)
        let (age, fresh) = RFC9111.reportedFreshness(stored, now: timing.responseTime, options: evaluation)
        var response = CachedResponse(url: original.url, status: received.status, statusText: received.statusText,
                                      headers: received.headers, body: body, bodySize: received.bodySize,
                                      source: .network, age: age, isFresh: fresh, reason: reason, storedBodyURL: blob)
        response.interimResponses = received.interimResponses
        let lifetime = RFC9111.freshnessLifetime(stored, options: evaluation)
        response.cacheStatus = CacheStatus(hit: false, forward: .miss, forwardStatus: received.status,
                                           ttl: isStored ? CacheStatus.ttl(lifetime: lifetime, age: age) : nil,
                                           stored: isStored)
        return response
    }
}
