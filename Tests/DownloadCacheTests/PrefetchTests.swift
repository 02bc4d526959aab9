import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Synchronization
import Testing

/// `DownloadCache.prefetch`: pins, counts sources and failures in its report and progress, emits one event per URL.
@Suite struct PrefetchTests {
    @Test func prefetchPinsAndReportsSources() async throws {
        let transport = ScriptedTransport()
        let (cache, directory) = try makeScriptedCache(transport)
        defer { try? FileManager.default.removeItem(at: directory) }
        let urls = (0..<5).map { URL(string: "http://example.test/p\($0)")! }
        for _ in 0..<4 { transport.enqueue(status: 200, headers: [("Cache-Control", "max-age=60")], body: "12345") }
        transport.enqueue(status: 404, headers: [], body: "no")
        let progress = PrefetchLog()
        let report = await cache.prefetch(urls, pin: true, concurrency: 1, progress: { progress.append($0) })
        #expect(report.succeeded.count == 4 && report.failed.count == 1 && report.bytes == 20)
        #expect(report.failed.first?.error.code == .http(status: 404))
        #expect(progress.values.last == PrefetchProgress(completed: 4, failed: 1, total: 5, bytes: 20))
        // The 404 is storable too (RFC 9111 §4.2.2: heuristically cacheable) and is stored pinned like the rest.
        #expect(cache.store.allEntries().filter(\.isPinned).count == 5)
        let again = await cache.prefetch(Array(urls.prefix(4)), pin: true)
        #expect(again.fromCache == 4 && again.fromNetwork == 0)
    }

    /// Prefetching a 404 emits `.failed` (with `.http(status: 404)`) for it, as the report counts it, and
    /// `.succeeded` for the others.
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
            let missing = seen.first { $0.kind == .failed && $0.url == h.origin.url("/missing") }
            #expect(missing != nil)
            #expect(!seen.contains { $0.kind == .succeeded && $0.url == h.origin.url("/missing") })
            #expect(seen.contains { $0.kind == .succeeded && $0.url == h.origin.url("/ok") })
        }
    }
}

/// Thread-safe list of prefetch progress values.
final class PrefetchLog: Sendable {
    private let storage = Mutex<[PrefetchProgress]>([])
    func append(_ value: PrefetchProgress) { storage.withLock { $0.append(value) } }
    var values: [PrefetchProgress] { storage.withLock { $0 } }
}
