import CacheStore
import Foundation
import HTTPCacheSemantics
import SharedTier
import Synchronization

extension DownloadCache {
    /// The slow path of a GET, run once per coalesced group: re-reads the cache (a previous group may have
    /// just stored it), asks RFC 9111 for a decision and performs it.
    func resolveGET(_ request: CacheRequest, options: RequestOptions,
                    lookup: CandidateLookup? = nil) async -> Result<CachedResponse, DownloadError> {
        let now = configuration.now()
        let evaluation = evaluationOptions(options)
        let stored = options.readsCache ? reusableCandidates(lookup, for: request).first : nil
        if options.readsCache && stored == nil { store.recordLookup(hit: false) }  // a miss in `dlcache stats`
        let decision = RFC9111.evaluate(request: request, stored: stored?.metadata.stored, now: now, options: evaluation)
        switch decision {
        case .useStored(let reason):
            if let stored, let hit = serve(stored, request: request, source: .cache, reason: reason,
                                           options: options, now: now) {
                return .success(hit)
            }
            return await exchange(request, original: request, stored: nil, options: options, reason: reason)
        case .useStoredAndRevalidate(let conditional, let reason):
            if let stored, let hit = serve(stored, request: request, source: .cache, reason: reason,
                                           options: options, now: now) {
                revalidateInBackground(conditional, original: request, stored: stored, options: options)
                return .success(hit)
            }
            return await exchange(request, original: request, stored: nil, options: options, reason: reason)
        case .revalidate(let conditional, let reason):
            return await coordinatedExchange(conditional, original: request, stored: stored, options: options,
                                             reason: reason, lookup: lookup)
        case .fetch(let reason):
            return await coordinatedExchange(request, original: request, stored: stored, options: options,
                                             reason: reason, lookup: lookup)
        case .unsatisfiable(let reason):
            return .failure(DownloadError(.notCached, reason))
        }
    }

    /// stale-while-revalidate (RFC 5861 / RFC 9111 §4.2.4): one background conditional request per key.
    func revalidateInBackground(_ conditional: CacheRequest, original: CacheRequest, stored: StoredCandidate,
                                        options: RequestOptions) {
        let key = "bg\n" + RFC9111.primaryKey(method: "GET", url: original.url) + "\n" + stored.key.variant
        let quiet = RequestOptions(policy: options.policy, fallbackToCacheIfLoadFails: options.fallbackToCacheIfLoadFails,
                                   ignoreServerCacheControl: options.ignoreServerCacheControl, storage: options.storage,
                                   readFromCache: true, writeToCache: options.writeToCache,
                                   expiration: options.expiration.withoutRenewal, pin: options.pin, timeout: options.timeout,
                                   stallRule: options.stallRule)
        backgroundWork.start { [self] in
            _ = await self.backgroundRevalidations.run(key: key) { [self] in
                let started = self.configuration.now()
                let result = await self.exchange(conditional, original: original, stored: stored, options: quiet,
                                                 reason: "background revalidation")
                if let tier = self.sharedTier {
                    await self.writeThrough(tier, request: original, options: quiet, since: started, result: result)
                }
                return result
            }
        }
    }

    /// Sends `sent` (the request, or its conditional form) to the origin and turns the answer into a result:
    /// 304 → freshen the stored response (§4.3.4); 5xx or failure → stale fallback where allowed (§4.2.4);
    /// full response → stored when storable (§3), streamed into the store without holding it in memory.
    func exchange(_ sent: CacheRequest, original: CacheRequest, stored: StoredCandidate?, options: RequestOptions,
                  reason: String) async -> Result<CachedResponse, DownloadError> {
        let resumed = resumablePartial(sent, original: original, stored: stored, options: options)
        let sink: BodySink
        if let resumed {
            sink = BodySink(resuming: resumed.writer, maxTransferBytes: configuration.maxTransferBytes)
        } else {
            do { sink = try BodySink(cache: self) } catch { return .failure(error) }
        }
        let requestTime = configuration.now()
        let transfer = PartialTransfer(cache: self, writer: sink.bodyWriter, original: original, options: options,
                                       requestTime: requestTime, resumed: resumed)
        // When the final head arrived: the response time of RFC 9111 §4.2.3, so a body's transfer time does not
        // count towards its age.
        let headTime = HeadArrival()
        let clock = configuration.now
        let store = self.store
        let bodyCap = configuration.maxResponseBodyBytes
        let entryLimit = options.refusesBodiesOverTheEntryLimit && options.writeToCache
            ? store.configuration.entryByteLimit : nil
        let mode = configuration.mode
        let ignoreServerCacheControl = options.ignoreServerCacheControl
        let targetedFields = configuration.effectiveTargetedFields
        var received: TransportResponse
        switch await send(resumed.map { Self.resumeRequest(sent, $0) } ?? sent, to: sink.file, options: options,
                          head: { head in
                              headTime.record(clock())
                              Self.allowAnnouncedLength(of: head, in: sink.file) { store.temporarySpaceAvailable }
                              if resumed != nil { Self.limitResumedBody(of: head, in: sink.file) }
                              var refused = bodyCap.map {
                                  Self.capBody(of: head, at: $0, held: resumed?.held ?? 0, in: sink.file)
                              } ?? false
                              // Fetching only to store: a storable 200 over the entry limit is refused at its first
                              // byte when its length is announced, else stopped once it grows past the limit.
                              if let entryLimit, !refused, head.status == 200,
                                 RFC9111.storability(request: original, response: CacheResponse(status: head.status, headers: head.headers),
                                                     mode: mode, ignoreServerCacheControl: ignoreServerCacheControl,
                                                     targetedFields: targetedFields).isStorable {
                                  refused = Self.capBody(of: head, at: entryLimit, held: 0, in: sink.file,
                                                         words: .entryLimit)
                              }
                              // A body refused at its first byte is not registered as a partial: one kept from an
                              // earlier transfer of the URL stays.
                              if !refused || resumed != nil { transfer.receivedHead(head) }
                              Self.tapBody(options.bodyTap, head: head, sink: sink, resumed: resumed, transfer: transfer)
                          }, bodyProgress: transfer.receivedBytes) {
        case .success(let response):
            received = response
        case .failure(let error):
            if transfer.isKept, !Self.discardsPartial(error) {
                sink.keepAsPartial(in: store)
            } else {
                transfer.forget()
                sink.discard()
            }
            return fallback(after: DownloadError(error), status: nil, original: original, stored: stored, options: options)
        }
        let responseTime = headTime.time ?? configuration.now()
        var resumedNote = ""
        if let resumed {
            switch transfer.outcome {
            case .rejected(let why):
                transfer.forget()
                sink.discard()
                return await exchange(sent, original: original, stored: stored, options: options,
                                      reason: "\(reason); the answer to resuming at byte \(resumed.held) was not combined (\(why)): fetched whole")
            case .appending(let headers, _):
                switch combinedResponse(received, partialHeaders: headers, resumed: resumed, sink: sink,
                                        requestTime: requestTime, responseTime: responseTime, options: options) {
                case .success(let whole):
                    received = whole
                    resumedNote = "; resumed: the \(resumed.held) bytes kept from an interrupted transfer and a 206 for the rest (RFC 9110 §14.4)"
                case .failure(let error):
                    if transfer.isKept { sink.keepAsPartial(in: store) } else { sink.discard() }
                    return fallback(after: DownloadError(error), status: nil, original: original, stored: stored,
                                    options: options)
                }
            case .none:
                break
            }
        }
        defer { transfer.forget() }
        let head = CacheResponse(status: received.status, headers: received.headers)
        if received.status == 304, let stored,
           sent == RFC9111.conditionalRequest(for: original, stored: stored.metadata.stored) {
            // A 304 to the cache's own conditional request answers about `stored`. A 304 to preconditions the
            // caller wrote (the stored response had no validator to send instead) answers about the caller's
            // copy, which may be another version than `stored`: it goes to the caller and freshens nothing.
            sink.discard()
            guard let result = freshened(stored, with: head, original: original, options: options,
                                         requestTime: requestTime, responseTime: responseTime) else {
                // §4.3.4: the 304's validator does not select the stored response, so it says nothing about it:
                // ask again without conditions.
                return await exchange(original, original: original, stored: nil, options: options,
                                      reason: "\(reason); the 304's validator did not select the stored response, fetched unconditionally")
            }
            if case .failure(let error) = result, error.code == .storage {
                // The stored body vanished (evicted, corrupt) between the decision and the 304: fetch it whole.
                return await exchange(original, original: original, stored: nil, options: options,
                                      reason: "stored body gone after 304; fetched again")
            }
            return result
        }
        if (500...599).contains(received.status), stored != nil {
            let error = DownloadError(.http(status: received.status), "origin answered \(received.status)")
            if case .success(let stale) = fallback(after: error, status: received.status, original: original,
                                                   stored: stored, options: options) {
                sink.discard()
                return .success(stale)
            }
        }
        return await complete(received, sink: sink, original: original, options: options,
                              requestTime: requestTime, responseTime: responseTime, reason: reason + resumedNote)
    }

    /// Lets `file` hold the body `head` announces even when that is over `maxTransferBytes`: the cap bounds a body
    /// of unknown length (chunked, or closed by the connection), such as an endless one; a body framed by its
    /// `Content-Length` (RFC 9112 §6.3: no `Transfer-Encoding`; no `Content-Encoding`, so what is written is what
    /// was announced, not a decoding of it) cannot outgrow it, so the announcement is its bound. A body stored or
    /// not (`--no-store`, over `maxEntryBytes`) of any announced size is delivered; one of unknown length still
    /// fails once over the cap, stored or not, since it is written to disk on its way to the caller.
    ///
    /// The origin chooses that number, so it raises the cap only as far as the disk can take it: to at most the
    /// bytes `available()` says the file system still has (the store's `tmp/`; nil: unknown, no raise) less a
    /// tenth of them, at least 256 MiB — a `Content-Length: 10^15` never lets a transfer fill the disk.
    static func allowAnnouncedLength(of head: TransportResponseHead, in file: ResponseBodyFile,
                                     available: () -> Int64?) {
        let headers = head.headers
        guard head.decodedContentEncoding == nil, !headers.contains("Transfer-Encoding"),
              !headers.contains("Content-Encoding") else { return }
        let lengths = headers.values(for: "Content-Length")
        guard let first = lengths.first, lengths.allSatisfy({ $0 == first }) else { return }
        let digits = HTTPHeaders.trimOWS(first)
        guard !digits.isEmpty, digits.utf8.count <= 18, digits.utf8.allSatisfy({ (48...57).contains($0) }),
              let length = Int64(digits) else { return }
        guard let limit = file.byteLimit, length > limit else { return }
        guard let free = available() else { return }
        let room = free - max(256 << 20, free / 10)
        if length <= room { file.raiseLimit(toAtLeast: length) }
    }

    /// Caps what a 206 answering a resume may write into the partial's file at the bytes its `Content-Range`
    /// encloses (RFC 9110 §14.4: the 206 body is exactly the enclosed range; one starting before the held bytes
    /// is written from its first byte over the overlap), so a 206 that goes on past its range fails once over it
    /// (`invalidResponse`) instead of filling `tmp/`. Without a `Content-Range` that parses the cache's
    /// `maxTransferBytes` stays the cap; whether the bytes are combined at all is decided by the head
    /// (`PartialTransfer`).
    static func limitResumedBody(of head: TransportResponseHead, in file: ResponseBodyFile) {
        guard head.status == 206, let range = ContentRange.of(head.headers)?.range else { return }
        file.lowerLimit(toAtMost: range.last + 1 - range.first)
    }

    /// Applies the caller's cap on the whole body, `cap` bytes (``Configuration/maxResponseBodyBytes``, curl's
    /// `--max-filesize`): a response announcing a longer body (its `Content-Length`, or a 206's complete length)
    /// fails at its first body byte; any other fails once the body grows past the cap (`held` bytes of it are
    /// kept from an interrupted transfer already). Either way `bodyTooLarge`, nothing stored.
    /// - Returns: true when the announced length refuses the body at its first byte.
    @discardableResult
    static func capBody(of head: TransportResponseHead, at cap: Int64, held: Int64, in file: ResponseBodyFile,
                        words: CapWords = .bodyLimit) -> Bool {
        let announced = head.status == 206 ? ContentRange.of(head.headers)?.completeLength
            : RFC9110.completeLength(head.headers)
        if let announced, announced > cap {
            file.cap(atMost: 0, reason: words.refused(announced, cap))
            return true
        } else {
            // A 206's body starts at its first byte (which may be before the bytes held: the overlap is rewritten).
            let start = head.status == 206 ? (ContentRange.of(head.headers)?.range?.first ?? held) : 0
            file.cap(atMost: cap - start, reason: words.stopped(cap))
            return false
        }
    }

    /// How ``capBody(of:at:held:in:words:)`` words a refusal: a body announced over the limit (its length and the
    /// limit, in bytes), and one that grew past it.
    struct CapWords: Sendable {
        let refused: @Sendable (Int64, Int64) -> String
        let stopped: @Sendable (Int64) -> String

        /// The caller's cap on a body (``Configuration/maxResponseBodyBytes``, curl's `--max-filesize`).
        static let bodyLimit = CapWords(
            refused: { "the \($0)-byte body is over the \($1)-byte limit on a body (maxResponseBodyBytes, --max-filesize); not fetched" },
            stopped: { "the body went over the \($0)-byte limit on a body (maxResponseBodyBytes, --max-filesize); stopped there" })
        /// The per-entry limit, for a caller that fetches only to store (pre-caching).
        static let entryLimit = CapWords(
            refused: { "not stored: body of \($0) bytes is over the \($1)-byte \(DownloadCache.entryLimitWords); not fetched" },
            stopped: { "not stored: the body went over the \($0)-byte \(DownloadCache.entryLimitWords); stopped there" })
    }

    /// One transport exchange under its origin's concurrency limit (`maxConcurrentDownloads`), reporting progress;
    /// `head` gets the response head as soon as it is received (``TransportEvents/head``), before the body.
    func send(_ request: CacheRequest, to file: ResponseBodyFile, options: RequestOptions,
              head: (@Sendable (TransportResponseHead) -> Void)? = nil,
              bodyProgress: (@Sendable (Int64) -> Void)? = nil) async -> Result<TransportResponse, TransportError> {
        let limiter = limiters.limiter(for: request.url)
        guard await limiter.acquire() else { return .failure(.cancelled) }
        defer { limiter.release() }
        let url = request.url
        let hub = progressHub
        let callback = options.progress
        var transportRequest = TransportRequest(method: request.method, url: url, headers: request.headers,
                                                body: options.body, timeout: options.timeout, followRedirects: false,
                                                stallRule: options.stallRule ?? configuration.stallRule)
        transportRequest.maxReceiveBytesPerSecond = options.maxReceiveBytesPerSecond
        defer { hub.finish(url) }
        do {
            let events = TransportEvents(head: head) { received, expected in
                bodyProgress?(received)
                let progress = DownloadProgress(url: url, bytesReceived: received, bytesExpected: expected)
                callback?(progress)
                hub.send(progress)
            }
            let response = try await transport.send(transportRequest, bodyFile: file, events: events)
            return .success(response)
        } catch {
            // The transport words a refused write its own way ("write failed: ..."); the cause is the refusal
            // (another version's bytes: `discardsPartial` then keeps nothing of the held bytes).
            if let refusal = file.refusal { return .failure(refusal) }
            return .failure(error)
        }
    }

    /// After a failed exchange or a 5xx: serve the stored response marked `.stale` when RFC 9111 §4.2.4
    /// (disconnected, stale-if-error) or `fallbackToCacheIfLoadFails` allows it; otherwise the error.
    private func fallback(after error: DownloadError, status: Int?, original: CacheRequest, stored: StoredCandidate?,
                          options: RequestOptions) -> Result<CachedResponse, DownloadError> {
        guard error.code != .cancelled, let stored else { return .failure(error) }
        let now = configuration.now()
        var evaluation = evaluationOptions(options)
        // Only an unreachable origin is "disconnected" (RFC 9111 §4.2.4); a TLS or local failure is not.
        let disconnected: Set<DownloadError.Code> = [.connectionFailed, .timedOut, .truncated]
        if status != nil || !disconnected.contains(error.code) { evaluation.servesStaleWhenDisconnected = false }
        let decision = RFC9111.errorDecision(stored: stored.metadata.stored, request: original, now: now,
                                             options: evaluation, status: status)
        guard decision.servesStored,
              var stale = serve(stored, request: original, source: .stale,
                                reason: "\(decision.reason) (origin: \(error.detail))", options: options, now: now) else {
            return .failure(error)
        }
        stale.cacheStatus.forwardStatus = status
        stale.cacheStatus.detail = status == nil ? "served stale while disconnected" : "served stale after an error"
        return .success(stale)
    }

    /// 304 Not Modified: freshen every stored response it selects (§4.3.4) and serve the chosen one; `nil` when
    /// the 304 does not select `stored` (its validator names another response): then it must not be used.
    private func freshened(_ stored: StoredCandidate, with notModified: CacheResponse, original: CacheRequest,
                           options: RequestOptions, requestTime: Date, responseTime: Date) -> Result<CachedResponse, DownloadError>? {
        let all = candidates(for: original)
        // The conditional request carried `stored`'s validators only (`exchange` comes here only then).
        let validated = all.firstIndex { $0.key == stored.key }
        let selected = Set(RFC9111.selectForFreshening(all.map(\.metadata.stored), notModified: notModified,
                                                       validated: validated))
        var chosen = stored
        var chosenWasSelected = false
        for (index, candidate) in all.enumerated() where selected.contains(index) {
            var metadata = candidate.metadata
            metadata.stored = RFC9111.freshen(metadata.stored, with: notModified, requestTime: requestTime,
                                              responseTime: responseTime, options: evaluationOptions(options))
            persist(metadata, for: candidate.key)
            if candidate.key == stored.key {
                chosen = StoredCandidate(info: candidate.info, metadata: metadata)
                chosenWasSelected = true
            }
        }
        guard chosenWasSelected else { return nil }
        let now = configuration.now()
        if var served = serve(chosen, request: original, source: .revalidated, reason: "revalidated: 304 Not Modified",
                              options: options, now: now) {
            // The 304's cookies are this caller's even where the stored response keeps none (shared mode).
            served.headers = RFC9111.headersForTheRevalidatingClient(served.headers, notModified: notModified.headers,
                                                                     mode: evaluationOptions(options).mode)
            return .success(served)
        }
        return .failure(DownloadError(.storage, "stored body vanished during revalidation of \(original.url.absoluteString)"))
    }
}

/// When an exchange's final response head arrived (set on the transport's thread, read after the exchange).
final class HeadArrival: Sendable {
    private let value = Mutex<Date?>(nil)
    /// Records `time` (a later head, after a redirect or an interim response, replaces an earlier one).
    func record(_ time: Date) { value.withLock { $0 = time } }
    /// The time recorded; nil when no head was reported.
    var time: Date? { value.withLock { $0 } }
}
