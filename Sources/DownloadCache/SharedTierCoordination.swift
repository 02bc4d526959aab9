import CacheStore
import Foundation
import HTTPCacheSemantics
import SharedTier

/// What a GET does next after the local store was read (again).
enum LocalStep: Sendable {
    /// Answered from the local store.
    case served(CachedResponse)
    /// Needs the origin: send `sent` (the request or its conditional form) with `stored` as the stored response.
    case origin(sent: CacheRequest, stored: StoredCandidate?, reason: String)
}

extension DownloadCache {
    /// The shared tier a configuration asks for, scoped to its RFC 9111 mode and namespace (nothing written in one
    /// scope is readable through another: the scope is part of every key and of every value's identity).
    static func makeSharedTier(_ configuration: Configuration) -> SharedTier? {
        guard let shared = configuration.sharedTier else { return nil }
        let mode = configuration.mode == .shared ? "shared" : "private"
        return SharedTier(configuration: shared, scope: "\(mode):\(configuration.namespace)", log: configuration.log)
    }

    /// A GET that needs the origin, coordinated with the other processes of this machine (a lock per cache key
    /// in the namespace) and of the fleet (the shared tier's entries and its `SET NX PX` lock), so one origin
    /// request answers them all; each wait is bounded, and any failure of the coordination falls back to
    /// fetching alone.
    /// `lookup`: the request's earlier index read, reused when the lock is taken without waiting and no write was
    /// committed since (``reusableCandidates(_:for:)``).
    func coordinatedExchange(_ sent: CacheRequest, original request: CacheRequest, stored: StoredCandidate?,
                             options: RequestOptions, reason: String,
                             lookup: CandidateLookup? = nil) async -> Result<CachedResponse, DownloadError> {
        var step = LocalStep.origin(sent: sent, stored: stored, reason: reason)
        let primary = RFC9111.primaryKey(method: "GET", url: request.url)
        var localLock: KeyLock?
        if options.readsCache && options.writeToCache && configuration.crossProcessLockTimeout > 0 {
            var onWait: (@Sendable () -> Void)?
            if let tell = options.waitingForAnotherProcess {
                let url = request.url
                onWait = { tell(url) }
            }
            switch await store.acquireKeyLock(primary, timeout: configuration.crossProcessLockTimeout, onWait: onWait) {
            case .acquired(let lock, let waited):
                // After waiting, another process's fetch is over: read what it stored and never hold the lock for
                // a fetch of our own (if it stored nothing, every waiter fetches at once, not one after another).
                if waited { lock.release() } else { localLock = lock }
                step = localStep(request, options: options, otherwise: step, note: "stored by another process",
                                 lookup: waited ? nil : lookup)
            case .timedOut, .unavailable:
                break
            }
        }
        defer { localLock?.release() }
        if case .served(let hit) = step { return .success(hit) }
        var fleetLock: SharedLock?
        if let tier = sharedTier, options.readsCache {
            (step, fleetLock) = await sharedTierStep(tier, request: request, primary: primary, options: options, step: step)
            if case .served(let hit) = step { return .success(hit) }
        }
        guard case .origin(let next, let candidate, let why) = step else { return .failure(DownloadError(.other, "no step")) }
        let started = configuration.now()
        let result = await exchange(next, original: request, stored: candidate, options: options, reason: why)
        if let tier = sharedTier {
            await writeThrough(tier, request: request, options: options, since: started, result: result)
            if let fleetLock { await tier.release(fleetLock) }
        }
        return result
    }

    /// Re-reads the local store for `request` and decides again (another process may have stored or freshened
    /// it); `otherwise` when it still holds nothing better.
    /// `lookup`: an earlier read, reused while no write was committed since (``reusableCandidates(_:for:)``).
    func localStep(_ request: CacheRequest, options: RequestOptions, otherwise: LocalStep, note: String,
                   lookup: CandidateLookup? = nil) -> LocalStep {
        guard let candidate = reusableCandidates(lookup, for: request).first else { return otherwise }
        let now = configuration.now()
        let decision = RFC9111.evaluate(request: request, stored: candidate.metadata.stored, now: now,
                                        options: configuration.evaluationOptions(options))
        switch decision {
        case .useStored(let reason):
            if let hit = serve(candidate, request: request, source: .cache, reason: "\(reason) (\(note))",
                               options: options, now: now) {
                return .served(hit)
            }
            return otherwise
        case .useStoredAndRevalidate(let conditional, let reason):
            if let hit = serve(candidate, request: request, source: .cache, reason: "\(reason) (\(note))",
                               options: options, now: now) {
                revalidateInBackground(conditional, original: request, stored: candidate, options: options)
                return .served(hit)
            }
            return otherwise
        case .revalidate(let conditional, let reason):
            return .origin(sent: conditional, stored: candidate, reason: reason)
        case .fetch(let reason):
            return .origin(sent: request, stored: candidate, reason: reason)
        case .unsatisfiable:
            return otherwise
        }
    }

    /// On a local miss: an entry from the shared tier (stored locally, then served as a local hit); else the fleet
    /// lock, or — when another process holds it — a bounded wait (polling with backoff) for its entry.
    /// - Returns: the next step and the fleet lock this process now holds (released after its exchange).
    private func sharedTierStep(_ tier: SharedTier, request: CacheRequest, primary: String, options: RequestOptions,
                                step: LocalStep) async -> (LocalStep, SharedLock?) {
        var step = step
        guard let found = await tier.lookup(primary: primary) else { return (step, nil) }
        if let next = useShared(found.entries, request: request, primary: primary, options: options, step: step) {
            step = next
            if case .served = step {
                tier.recordHit()
                return (step, nil)
            }
        }
        switch await tier.acquireLock(primary: primary) {
        case .acquired(let lock):
            tier.recordMiss()
            return (step, lock)
        case .unavailable:
            tier.recordMiss()
            return (step, nil)
        case .heldElsewhere:
            // A lock no holder of ours set (no expiry) is not waited for.
            if found.foreignLock {
                tier.recordMiss()
                return (step, nil)
            }
        }
        let deadline = Date().addingTimeInterval(max(0, tier.configuration.maxWait))
        var pause: TimeInterval = 0.005
        while !Task.isCancelled {
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { break }
            try? await Task.sleep(nanoseconds: UInt64(min(pause, left) * 1_000_000_000))
            pause = min(pause * 2, 0.05)
            guard let again = await tier.lookup(primary: primary) else { break }
            if let next = useShared(again.entries, request: request, primary: primary, options: options, step: step) {
                step = next
                if case .served = step {
                    tier.recordHit()
                    return (step, nil)
                }
            }
            if !again.isLocked { break }   // the holder finished (or its lock expired) without a usable entry
        }
        tier.recordMiss()
        return (step, nil)
    }

    /// The step a shared entry allows: the newest entry that answers `request` (and is newer than the local one),
    /// served at once when RFC 9111 lets it be used without the origin — the local store is filled in the
    /// background, so the caller never waits for that write's fsync — else stored locally first and decided
    /// again (a stale entry is then revalidated like a local one). `nil` when no entry helps.
    func useShared(_ entries: [SharedEntry], request: CacheRequest, primary: String, options: RequestOptions,
                   step: LocalStep) -> LocalStep? {
        guard let best = newestShared(entries, request: request, primary: primary) else { return nil }
        let key = StoreKey(primary: primary, variant: best.entry.variant)
        let now = configuration.now()
        let stored = best.metadata.stored
        let decision = RFC9111.evaluate(request: request, stored: stored, now: now,
                                        options: configuration.evaluationOptions(options))
        if case .useStored(let reason) = decision, best.entry.body.count <= configuration.inMemoryBodyLimit,
           !options.pin, stored.slidingLifetime == nil {
            let (age, fresh) = RFC9111.reportedFreshness(stored, now: now, options: evaluationOptions(options))
            var served = CachedResponse(url: request.url, status: stored.response.status, statusText: best.metadata.statusText,
                                        headers: RFC9111.responseHeadersForServing(stored, now: now),
                                        body: .data(best.entry.body), bodySize: Int64(best.entry.body.count),
                                        source: .cache, age: age, isFresh: fresh,
                                        reason: "\(reason) (from the shared tier)")
            served.cacheStatus = servedCacheStatus(stored, source: .cache, age: age, options: options)
            served.cacheStatus.detail = "shared tier"
            let storage = options.storage
            // The write (a blob's fsync for bodies above the inline threshold) runs on a Dispatch thread: the task
            // waiting for it holds none of the few cooperative threads the foreground calls need.
            backgroundWork.start { [self] in
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    DispatchQueue.global(qos: .utility).async {
                        self.storeShared(best, key: key, storage: storage)
                        continuation.resume()
                    }
                }
            }
            return .served(served)
        }
        guard storeShared(best, key: key, storage: options.storage) else { return nil }
        return localStep(request, options: options, otherwise: step, note: "from the shared tier")
    }

    /// Writes a shared entry into the local store. - Returns: whether it was stored.
    @discardableResult
    func storeShared(_ shared: (entry: SharedEntry, metadata: StoredEntryMetadata), key: StoreKey,
                     storage: StorageClass) -> Bool {
        do {
            try store.store(shared.entry.body, metadata: try shared.metadata.encoded(), for: key, storageClass: storage)
            return true
        } catch {
            configuration.log("cannot store a shared-tier entry locally: \(ErrorWords.describe(error))")
            return false
        }
    }

    /// The newest shared entry that answers `request`, when it is newer than the newest local one.
    ///
    /// Every value is hostile until proven otherwise: its metadata must decode, name GET and this primary key,
    /// carry no caller override (expiry, sliding), match its variant and the request (RFC 9111 §4.1), be storable
    /// by this cache in its mode (§3, §3.5: nothing private reaches a shared-mode client), agree with its
    /// Content-Length and not come from the future. In a shared cache the entry returned has no cookie
    /// (``storedResponseForUse(_:)``): that is what is served and stored locally.
    func newestShared(_ entries: [SharedEntry], request: CacheRequest,
                      primary: String) -> (entry: SharedEntry, metadata: StoredEntryMetadata)? {
        let now = configuration.now()
        var best: (entry: SharedEntry, metadata: StoredEntryMetadata)?
        for entry in entries {
            // Another member (any writer of the tier) may have stored a cookie with it: in a shared cache it is
            // neither served nor stored locally (RFC 9111 §3.1, §7.3).
            guard let decoded = StoredEntryMetadata.decodeUsable(entry.metadata),
                  acceptable(decoded, entry: entry, request: request, primary: primary, now: now),
                  let metadata = storedResponseForUse(decoded) else {
                continue
            }
            if best.map({ metadata.stored.responseTime > $0.metadata.stored.responseTime }) ?? true {
                best = (entry, metadata)
            }
        }
        guard let best else { return nil }
        if let local = candidates(for: request).first, local.metadata.stored.responseTime >= best.metadata.stored.responseTime {
            return nil
        }
        return best
    }

    private func acceptable(_ metadata: StoredEntryMetadata, entry: SharedEntry, request: CacheRequest, primary: String,
                            now: Date) -> Bool {
        let stored = metadata.stored
        guard metadata.method == "GET", stored.requestMethod == "GET", let url = URL(string: metadata.url),
              RFC9111.primaryKey(method: "GET", url: url) == primary,
              stored.overrideExpiry == nil, stored.slidingLifetime == nil,
              stored.responseTime.timeIntervalSince(now) < 60, stored.requestTime <= stored.responseTime,
              RFC9111.variantKey(of: stored) == entry.variant,
              RFC9111.matches(stored: stored, request: request, secret: keySecret),
              RFC9111.storability(request: request, response: stored.response, mode: configuration.mode).isStorable else {
            return false
        }
        if let length = stored.response.headers.first("Content-Length"), Int(length) != entry.body.count {
            return false
        }
        return true
    }

    /// After an exchange this process made: the stored (or freshened, §4.3.4) response goes to the shared tier too,
    /// when the caller did not override the server (expiry, Cache-Control, session storage).
    func writeThrough(_ tier: SharedTier, request: CacheRequest, options: RequestOptions, since: Date,
                      result: Result<CachedResponse, DownloadError>) async {
        guard case .success(let response) = result, response.source == .network || response.source == .revalidated,
              options.writeToCache, options.expiration == .server, !options.ignoreServerCacheControl,
              options.storage == .permanent,
              let candidate = candidates(for: request).first, candidate.metadata.stored.responseTime >= since else {
            return
        }
        let stored = candidate.metadata.stored
        guard stored.overrideExpiry == nil, stored.slidingLifetime == nil, candidate.info.storageClass == .permanent,
              candidate.info.bodySize <= Int64(tier.configuration.maxBodyBytes),
              RFC9111.storability(request: request, response: stored.response, mode: configuration.mode).isStorable else {
            return
        }
        let lifetime = sharedLifetime(stored, tier: tier)
        guard lifetime > 0, let entry = store.peekEntry(for: candidate.key) else { return }
        // Other members serve the entry to their clients: in a shared cache it goes without the cookies a
        // response stored in this namespace by a private cache may hold (the candidate is already without them).
        var metadata = candidate.info.metadata
        if configuration.mode == .shared, let raw = metadataCache.decode(metadata),
           RFC9111.setsCookie(raw.stored.response.headers) {
            guard let stripped = try? candidate.metadata.encoded() else { return }
            metadata = stripped
        }
        await tier.store(primary: candidate.key.primary,
                         entry: SharedEntry(variant: candidate.key.variant, metadata: metadata, body: entry.body),
                         lifetime: lifetime)
    }

    /// Seconds a stored response stays useful to another cache: what is left of its freshness lifetime plus its
    /// stale-while-revalidate / stale-if-error window (RFC 5861), or — when it has a validator and can still be
    /// revalidated (§4.3) — the tier's maximum entry lifetime.
    func sharedLifetime(_ stored: StoredResponse, tier: SharedTier) -> TimeInterval {
        let evaluation = configuration.evaluationOptions(RequestOptions())
        let now = configuration.now()
        let remaining = RFC9111.freshnessLifetime(stored, options: evaluation) - RFC9111.currentAge(stored, now: now)
        let cc = CacheControl.response(stored.response.headers)
        var lifetime = remaining + TimeInterval(max(cc.staleWhileRevalidate ?? 0, cc.staleIfError ?? 0, 0))
        let headers = stored.response.headers
        if headers.contains("ETag") || headers.contains("Last-Modified") {
            lifetime = max(lifetime, tier.configuration.maxEntryLifetime)
        }
        return min(lifetime, tier.configuration.maxEntryLifetime)
    }

    /// Unsafe methods (RFC 9111 §4.4): the primary keys invalidated locally are deleted from the shared tier too.
    func invalidateShared(_ primaryKeys: [String]) async {
        guard let tier = sharedTier else { return }
        for key in primaryKeys { await tier.invalidate(primary: key) }
    }

    /// This process's shared-tier counters and whether it is in use; `nil` when no shared tier is configured.
    public var sharedTierStatistics: SharedTierStatistics? { sharedTier?.statistics }

    /// Asks the shared tier now whether it answers (`PING`, ignoring the breaker): `nil` when it does or none is
    /// configured, else the problem in words (never containing the password).
    public func probeSharedTier() async -> String? {
        await sharedTier?.probe()
    }
}
