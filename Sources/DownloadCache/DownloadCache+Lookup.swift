import CacheStore
import Foundation
import HTTPCacheSemantics
import Synchronization
import SharedTier

/// One stored response the cache could use: the store's entry info and its decoded metadata.
struct StoredCandidate: Sendable {
    var info: EntryInfo
    var metadata: StoredEntryMetadata
    var key: StoreKey { info.key }
}

/// Remembers decoded metadata by its bytes so a hit does not pay a JSON decode (bounded, cleared when full).
final class MetadataDecodeCache: Sendable {
    private let entries = Mutex<[Data: StoredEntryMetadata]>([:])
    private let capacity = 4_096

    /// The decoded metadata of `data`, or `nil` when it is not usable (``StoredEntryMetadata/decodeUsable(_:)``).
    func decode(_ data: Data) -> StoredEntryMetadata? {
        if let known = entries.withLock({ $0[data] }) { return known }
        guard let decoded = StoredEntryMetadata.decodeUsable(data) else { return nil }
        entries.withLock { map in
            if map.count >= capacity { map.removeAll(keepingCapacity: true) }
            map[data] = decoded
        }
        return decoded
    }
}

/// The candidates of one lookup (``DownloadCache/candidates(for:)``) with the store's change counter read before
/// it, so the steps of one request that would read the index again can reuse them while no write has been
/// committed since (``DownloadCache/reusableCandidates(_:)``).
struct CandidateLookup: Sendable {
    let candidates: [StoredCandidate]
    /// ``CacheStore/changeCounter`` before the read; nil: never reusable.
    let counter: UInt64?
}

extension DownloadCache {
    /// The stored responses for `request`'s primary key that match it (RFC 9111 §4.1), newest first, as this
    /// cache's mode may serve them (``RFC9111/storedResponseForServing(_:mode:targetedFields:)``): in a shared
    /// cache, one a private cache stored in the same namespace that is `private` or sets a cookie without
    /// `public`/`s-maxage` is left out (left stored), any other is without its cookies.
    func candidates(for request: CacheRequest) -> [StoredCandidate] {
        let primary = RFC9111.primaryKey(method: "GET", url: request.url)
        var found: [StoredCandidate] = []
        for info in store.variants(forPrimaryKey: primary) {
            guard let metadata = metadataCache.decode(info.metadata) else {
                configuration.log("dropping entry with unreadable metadata: \(info.key)")
                try? store.remove(info.key)
                continue
            }
            guard RFC9111.matches(stored: metadata.stored, request: request, secret: keySecret),
                  let usable = storedResponseForUse(metadata) else { continue }
            found.append(StoredCandidate(info: info, metadata: usable))
        }
        // §4.1: when several match, use the most recent response (by Date, here by response time).
        return found.sorted { $0.metadata.stored.responseTime > $1.metadata.stored.responseTime }
    }

    /// `metadata` with its stored response as this cache's mode may serve it
    /// (``RFC9111/storedResponseForServing(_:mode:targetedFields:)``), or `nil` when it may serve it to no one (a
    /// miss; the entry stays stored). The one step between a stored response (local or from the shared tier) and
    /// its use: everything served, freshened or stored locally from it starts from what this returns, so in a
    /// shared cache no cookie stored with it is ever served.
    func storedResponseForUse(_ metadata: StoredEntryMetadata) -> StoredEntryMetadata? {
        guard let servable = RFC9111.storedResponseForServing(metadata.stored, mode: configuration.mode,
                                                              targetedFields: configuration.effectiveTargetedFields) else {
            return nil
        }
        var usable = metadata
        usable.stored = servable
        return usable
    }

    /// ``candidates(for:)`` with the change counter read before the lookup.
    func lookUp(_ request: CacheRequest) -> CandidateLookup {
        let counter = store.changeCounter
        return CandidateLookup(candidates: candidates(for: request), counter: counter)
    }

    /// `lookup`'s candidates while they are still what the index holds (no process committed a write since the
    /// lookup), else a new lookup's.
    func reusableCandidates(_ lookup: CandidateLookup?, for request: CacheRequest) -> [StoredCandidate] {
        if let lookup, let counter = lookup.counter, store.changeCounter == counter { return lookup.candidates }
        return candidates(for: request)
    }

    /// A response served from the cache without any network exchange, when the decision allows it.
    func fastHit(_ request: CacheRequest, options: RequestOptions) -> CachedResponse? {
        fastHit(request, candidates: candidates(for: request), options: options)
    }

    /// ``fastHit(_:options:)`` over candidates already looked up.
    func fastHit(_ request: CacheRequest, candidates: [StoredCandidate], options: RequestOptions) -> CachedResponse? {
        guard let candidate = candidates.first else { return nil }
        let now = configuration.now()
        let decision = RFC9111.evaluate(request: request, stored: candidate.metadata.stored, now: now,
                                        options: evaluationOptions(options))
        guard case .useStored(let reason) = decision else { return nil }
        // Only a stream's fresh hit may be checked while it is served: its iterator and response() hold back the
        // end until the verdict; every other answer (and every waiter on a shared exchange) is checked first.
        let checkWhileStreaming = options.storedBodyCheck == .whileStreaming && options.bodyTap != nil
        return serve(candidate, request: request, source: .cache, reason: reason, options: options, now: now,
                     checkingWhileStreaming: checkWhileStreaming)
    }

    /// Builds the response for a stored candidate; `nil` when its body is gone or corrupt (then it is a miss).
    ///
    /// Renews a sliding expiry and pins when the options ask. With `checkingWhileStreaming`, a body served from its
    /// blob file is not read through first: its crc32 check runs while it is streamed (``StoredBodyCheck/whileStreaming``).
    func serve(_ candidate: StoredCandidate, request: CacheRequest, source: ResponseSource, reason: String,
               options: RequestOptions, now: Date, checkingWhileStreaming: Bool = false) -> CachedResponse? {
        var stored = candidate.metadata.stored
        if RFC9111.answersNotModified(request: request, stored: stored) {
            return notModified(candidate, request: request, source: source, reason: reason, now: now, options: options)
        }
        let size = candidate.info.bodySize
        let body: ResponseBody
        var blobURL: URL?
        var opened: OpenedBody?
        var check: BodyCheck?
        if size <= Int64(configuration.inMemoryBodyLimit) {
            guard let entry = store.entry(for: candidate.key) else { return nil }
            body = .data(entry.body)
            blobURL = nil
        } else {
            // The store checks size and crc32: a body that does not match its index entry is never served (a
            // damaged entry is removed and it is a miss). An entry replaced concurrently since the
            // lookup no longer matches the candidate: a miss, but not damage (nothing is removed).
            // Held open, so an eviction, replacement or purge racing the caller's read cannot take the bytes away.
            let file: OpenedBody
            if checkingWhileStreaming {
                guard let (checked, running) = store.openBodyCheckedWhileServed(for: candidate.key,
                                                                                 matching: candidate.info) else { return nil }
                file = checked
                check = running
            } else {
                guard let verified = store.openVerifiedBody(for: candidate.key, matching: candidate.info) else { return nil }
                file = verified
            }
            body = .file(file.url)
            blobURL = file.url
            opened = file
        }
        let (age, fresh) = RFC9111.reportedFreshness(stored, now: now, options: evaluationOptions(options))
        if source == .cache || source == .revalidated {
            renewIfSliding(&stored, candidate: candidate, options: options, now: now)
        }
        if options.pin && !candidate.info.isPinned {
            do { try store.setPinned(true, for: candidate.key) } catch {
                configuration.log("cannot pin \(candidate.key): \(ErrorWords.describe(error))")
            }
        }
        var response = CachedResponse(url: request.url, status: stored.response.status,
                                      statusText: candidate.metadata.statusText,
                                      headers: RFC9111.responseHeadersForServing(stored, now: now),
                                      body: body, bodySize: size, source: source, age: age, isFresh: fresh,
                                      reason: reason, storedBodyURL: blobURL)
        response.cacheStatus = servedCacheStatus(stored, source: source, age: age, options: options)
        response.storedBody = opened
        response.storedBodyCheck = check
        return response
    }

    /// Cache-Status (RFC 9211) of a response served from storage: a hit, a 304 revalidation (`fwd=stale`,
    /// `fwd-status=304`, freshened so `stored`) or a stale fallback (`fwd=stale`, refined by the caller).
    func servedCacheStatus(_ stored: StoredResponse, source: ResponseSource, age: TimeInterval,
                           options: RequestOptions) -> CacheStatus {
        let lifetime = RFC9111.freshnessLifetime(stored, options: evaluationOptions(options))
        let ttl = CacheStatus.ttl(lifetime: lifetime, age: age)
        switch source {
        case .cache, .network: return CacheStatus(hit: true, ttl: ttl)
        case .revalidated: return CacheStatus(hit: false, forward: .stale, forwardStatus: 304, ttl: ttl, stored: true)
        case .stale: return CacheStatus(hit: false, forward: .stale, ttl: ttl, detail: "served stale")
        }
    }

    /// The 304 Not Modified the cache answers itself when the client's own `If-None-Match` / `If-Modified-Since`
    /// match the stored response (RFC 9111 §4.3.2): no body, the RFC 9110 §15.4.5 fields.
    private func notModified(_ candidate: StoredCandidate, request: CacheRequest, source: ResponseSource,
                             reason: String, now: Date, options: RequestOptions) -> CachedResponse {
        var stored = candidate.metadata.stored
        if source == .cache || source == .revalidated {
            renewIfSliding(&stored, candidate: candidate, options: options, now: now)
        }
        let (age, fresh) = RFC9111.reportedFreshness(stored, now: now, options: evaluationOptions(options))
        var response = CachedResponse(url: request.url, status: 304, statusText: "Not Modified",
                                      headers: RFC9111.notModifiedHeaders(stored, now: now, revalidated: source == .revalidated),
                                      body: .data(Data()), bodySize: 0, source: source, age: age, isFresh: fresh,
                                      reason: reason + "; the client's own precondition matches: 304 Not Modified (RFC 9111 §4.3.2)",
                                      storedBodyURL: nil)
        response.cacheStatus = servedCacheStatus(stored, source: source, age: age, options: options)
        return response
    }

    /// Sliding expiry (``RFC9111/renewedAfterHit(_:now:requestedSliding:)``): renews the expiry of a stored
    /// response that has a sliding lifetime, or that this request asks to renew, and persists it.
    private func renewIfSliding(_ stored: inout StoredResponse, candidate: StoredCandidate, options: RequestOptions,
                                now: Date) {
        let renewed = RFC9111.renewedAfterHit(stored, now: now, requestedSliding: options.expiration.slidingLifetime)
        guard renewed.slidingLifetime != nil else { return }
        stored = renewed
        var metadata = candidate.metadata
        metadata.stored = stored
        persist(metadata, for: candidate.key)
    }

    /// Writes new metadata for an existing entry (freshening, sliding expiry); failures are logged only.
    func persist(_ metadata: StoredEntryMetadata, for key: StoreKey) {
        do {
            try store.updateMetadata(try metadata.encoded(), for: key)
        } catch {
            configuration.log("cannot update metadata of \(key): \(ErrorWords.describe(error))")
        }
    }
}
