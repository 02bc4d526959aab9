import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// Background revalidations (RFC 5861 stale-while-revalidate) are awaited by `waitForBackgroundWork()` and
/// `close()`, and stored, against the live origin.
@Suite struct BackgroundRevalidationTests {
    /// A stale-while-revalidate refresh still running when the caller is done is awaited by
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

    /// `waitForBackgroundWork()` returns at once when nothing runs, and after a refresh when one does.
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
}
