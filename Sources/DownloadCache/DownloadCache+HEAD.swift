import CacheStore
import Foundation
import HTTPCacheSemantics
import SharedTier

extension DownloadCache {
    /// HEAD: answered from a stored GET response that may be used without contacting the origin (RFC 9111
    /// §4.1, §4.3.5; `RFC9111.lookupKeys`), else sent to the origin; a 200 answer freshens the stored GET
    /// responses whose validators and length it confirms, and removes those it contradicts.
    func headRequest(_ request: CacheRequest, options: RequestOptions) async throws(DownloadError) -> CachedResponse {
        if options.readsCache, let hit = headFromStoredGET(request, options: options) { return hit }
        let sink = try BodySink(cache: self)
        defer { sink.discard() }
        let requestTime = configuration.now()
        let received = try await send(request, to: sink.file, options: options).mapError { DownloadError($0) }.get()
        let responseTime = configuration.now()
        let head = CacheResponse(status: received.status, headers: received.headers)
        if received.status == 200 {
            var getRequest = request
            getRequest.method = "GET"
            for candidate in candidates(for: getRequest) {
                if let updated = RFC9111.freshenWithHEAD(candidate.metadata.stored, head: head,
                                                         requestTime: requestTime, responseTime: responseTime,
                                                         options: evaluationOptions(options)) {
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
        let (age, fresh) = RFC9111.reportedFreshness(stored, now: now, options: evaluationOptions(options))
        var response = CachedResponse(url: request.url, status: stored.response.status,
                                      statusText: candidate.metadata.statusText,
                                      headers: RFC9111.responseHeadersForServing(stored, now: now), body: .data(Data()),
                                      bodySize: 0, source: .cache, age: age, isFresh: fresh,
                                      reason: "HEAD answered from the stored GET response: \(reason)")
        response.cacheStatus = servedCacheStatus(stored, source: .cache, age: age, options: options)
        return response
    }
}
