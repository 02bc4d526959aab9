import CacheStore
import Foundation
import HTTPCacheSemantics
import SharedTier

extension DownloadCache {
    /// Unsafe methods (RFC 9111 §4.4): sent to the origin, never cached; a non-error answer invalidates the
    /// stored responses for the target URI and for same-origin Location / Content-Location.
    func unsafeRequest(_ request: CacheRequest, options: RequestOptions) async throws(DownloadError) -> CachedResponse {
        let sink = try BodySink(cache: self)
        let requestTime = configuration.now()
        let received: TransportResponse
        do {
            received = try await send(request, to: sink.file, options: options).mapError { DownloadError($0) }.get()
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
            var response = try await complete(received, sink: sink, original: asGET, options: options,
                                        requestTime: timing.requestTime, responseTime: timing.responseTime,
                                        reason: "POST response with explicit freshness and Content-Location = its URI (RFC 9110 §9.3.3)").get()
            response.cacheStatus.forward = .method
            return response
        }
        let body: ResponseBody
        if received.bodySize <= Int64(configuration.inMemoryBodyLimit) {
            body = .data(received.inMemoryBody ?? (try? sink.read()) ?? Data())
            sink.discard()
        } else if let inMemory = received.inMemoryBody, (try? sink.write(inMemory)) != nil,
                  let file = sink.keep() {
            body = .file(file)
        } else if let file = sink.keep() {
            body = .file(file)
        } else {
            throw DownloadError(.storage, "the response body could not be kept")
        }
        var response = networkResponse(received, original: request, body: body,
                                       reason: RFC9111.unsafeMethodReason(request: request, response: head),
                                       blob: nil, timing: timing)
        response.cacheStatus.forward = .method
        return response
    }
}
