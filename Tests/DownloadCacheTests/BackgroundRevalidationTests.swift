import CacheTestSupport
import DownloadCache
import Foundation
import Testing

/// Regression tests for the client-side items of QA round 2 (builds eb789bf / 1d728b5), against the live origin.
@Suite struct BackgroundRevalidationTests {
    /// QA2 bug 1: a stale-while-revalidate refresh still running when the caller is done is awaited by
    /// `waitForBackgroundWork()` / `close()` and stored, not lost.
    @Test func closeAwaitsBackgroundRevalidationAndStoresIt() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/swr", headers: [("Cache-Control", "max-age=1, stale-while-revalidate=60")],
                                         body: "v1")
            #expect(try await h.get("/swr").text == "v1")
            try await h.origin.configure(path: "/swr", headers: [("Cache-Control", "max-age=1, stale-while-revalidate=60")],
                                         body: "v2", delay: 1.0)
            try await h.advance(by: 5)
            let stale = try await h.get("/swr")
            #expect(stale.source == .cache && stale.text == "v1")
            await h.cache.close()
            #expect(h.cache.store.isClosed)
            #expect(try await h.hits("/swr").total == 2)
            // The refreshed response was stored before the store closed: a new instance serves it without the origin.
            let other = try h.reopen()
            let served = try await other.response(for: CacheRequest(url: h.origin.url("/swr")))
            #expect(served.source == .cache && served.text == "v2")
            #expect(try await h.hits("/swr").total == 2)
            await other.close()
        }
    }

    /// QA2 bug 1: `waitForBackgroundWork()` returns at once when nothing runs, and after a refresh when one does.
    @Test func waitForBackgroundWorkCoversARunningRefresh() async throws {
        try await withHarness { h in
            await h.cache.waitForBackgroundWork()
            try await h.origin.configure(path: "/w", headers: [("Cache-Control", "max-age=1, stale-while-revalidate=60")],
                                         body: "a")
            _ = try await h.get("/w")
            try await h.origin.configure(path: "/w", headers: [("Cache-Control", "max-age=100")], body: "b", delay: 0.5)
            try await h.advance(by: 5)
            #expect(try await h.get("/w").text == "a")
            await h.cache.waitForBackgroundWork()
            let after = try await h.get("/w")
            #expect(after.source == .cache && after.text == "b")
            #expect(try await h.hits("/w").total == 2)
        }
    }

    /// QA2 bug 4: a caller's expiration replaces the lifetime only; response `no-cache` still revalidates (RFC 9111
    /// §5.2.2.4) unless `ignoreServerCacheControl` is set too.
    @Test(arguments: [false, true])
    func expiresInDoesNotLiftNoCacheUnlessCacheControlIsIgnored(_ ignore: Bool) async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/nc", headers: [("Cache-Control", "no-cache")], body: "nc")
            let options = RequestOptions(ignoreServerCacheControl: ignore, expiration: .sliding(60))
            let first = try await h.get("/nc", options)
            #expect(first.source == .network)
            try await h.advance(by: 1)
            let second = try await h.get("/nc", options)
            #expect(second.text == "nc")
            if ignore {
                #expect(second.source == .cache)
                #expect(try await h.hits("/nc").total == 1)
            } else {
                #expect(second.source == .network)
                #expect(try await h.hits("/nc").total == 2)
            }
        }
    }

    /// QA2 bug 4, the convenience call: `download(_:expiration:)` keeps revalidating `no-cache`.
    @Test func downloadExpiresInRevalidatesNoCache() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/nc2", headers: [("Cache-Control", "no-cache")], body: "x")
            _ = try await h.cache.download(h.origin.url("/nc2"), expiration: .sliding(60))
            let again = try await h.cache.download(h.origin.url("/nc2"), expiration: .sliding(60))
            #expect(again.source == .network)
            #expect(try await h.hits("/nc2").total == 2)
        }
    }

    /// QA2 item 7: prefetching a 404 emits `.failed` (with `.http(status: 404)`), as the report counts it.
    @Test func prefetchOfA404EmitsFailedLikeTheReport() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/missing", status: 404, body: "no")
            try await h.origin.configure(path: "/ok", body: "ok")
            let events = h.cache.events
            let report = await h.cache.prefetch([h.origin.url("/missing"), h.origin.url("/ok")], concurrency: 1)
            #expect(report.failed.map(\.url) == [h.origin.url("/missing")])
            #expect(report.succeeded == [h.origin.url("/ok")])
            #expect(report.failed.first?.error.code == .http(status: 404))
            #expect(report.failed.first?.error.description == "HTTP 404 Not Found")
            var seen: [CacheEvent] = []
            for await event in events {
                seen.append(event)
                if seen.count == 2 { break }
            }
            let missing = seen.first { if case .failed(let url, _) = $0 { return url == h.origin.url("/missing") }; return false }
            #expect(missing != nil)
            #expect(!seen.contains { if case .succeeded(let url, _, _) = $0 { return url == h.origin.url("/missing") }; return false })
            #expect(seen.contains { if case .succeeded(let url, _, _) = $0 { return url == h.origin.url("/ok") }; return false })
        }
    }

    /// QA2 item 5: error descriptions read as words, never Swift case dumps.
    @Test func errorDescriptionsAreWords() async throws {
        #expect(DownloadError(.http(status: 404), "").description == "HTTP 404 Not Found")
        // One reason-phrase table serves error words and transports' status text (RFC 9110 §15).
        #expect(DownloadError(.http(status: 412), "").description == "HTTP 412 Precondition Failed")
        #expect(HTTPStatusText.text(for: 416) == "Range Not Satisfiable")
        #expect(HTTPStatusText.text(for: 299) == "Status 299")
        #expect(!DownloadError(.timedOut, "timed out").description.contains("DownloadError"))
        #expect(TransportError.truncatedChunked(received: 4196).description
                    == "truncated body: connection closed after 4196 bytes of a chunked body")
        #expect(!TransportError.truncated(expected: -1, received: 4196).description.contains("chunked"))
        #expect(TransportError.truncated(expected: 10, received: 4).description.contains("after 4 of 10 bytes"))
        try await withHarness { h in
            do throws(DownloadError) {
                _ = try await h.get("/never", RequestOptions(policy: .dontLoad))
                Issue.record("expected notCached")
            } catch {
                #expect(error.code == .notCached)
                #expect(error.description.hasPrefix("not cached: "))
                #expect(error.description.contains("policy return-cache-dont-load"))
                #expect(!error.description.contains("dontLoad") && !error.description.contains("DownloadError"))
            }
        }
    }
}
