import CacheTestSupport
import DownloadCache
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// A broken cache never breaks a download; metadata round trips; the URLCache adapter.
@Suite struct ResilienceTests {
    func makeCache(_ transport: ScriptedTransport, clock: FixedClock = FixedClock()) throws -> (DownloadCache, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-res-\(UUID().uuidString)")
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.transport = transport
        configuration.now = clock.now
        configuration.log = { _ in }
        return (try DownloadCache(configuration: configuration), directory)
    }

    @Test func downloadSucceedsWhenTheStoreDirectoryIsGone() async throws {
        let transport = ScriptedTransport()
        transport.enqueue(status: 200, headers: [("Cache-Control", "max-age=60")], body: "still works")
        let (cache, directory) = try makeCache(transport)
        try FileManager.default.removeItem(at: directory)
        let response = try await cache.response(for: CacheRequest(url: URL(string: "http://example.test/a")!))
        #expect(response.status == 200 && response.text == "still works" && response.source == .network)
    }

    @Test func scriptedFreshHitSendsNothingAndStaleSendsAConditionalRequest() async throws {
        let transport = ScriptedTransport()
        let clock = FixedClock()
        let (cache, directory) = try makeCache(transport, clock: clock)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = URL(string: "http://example.test/doc")!
        transport.enqueue(status: 200, headers: [("Cache-Control", "max-age=60"), ("ETag", "\"7\"")], body: "doc")
        _ = try await cache.response(for: CacheRequest(url: url))
        clock.advance(by: 10)
        #expect(try await cache.response(for: CacheRequest(url: url)).source == .cache)
        #expect(transport.requests.count == 1)
        clock.advance(by: 100)
        transport.enqueue(status: 304, headers: [("Cache-Control", "max-age=60"), ("ETag", "\"7\"")], body: "")
        let revalidated = try await cache.response(for: CacheRequest(url: url))
        #expect(revalidated.source == .revalidated && revalidated.text == "doc")
        #expect(transport.requests.count == 2)
        #expect(transport.requests.last?.headers.first("If-None-Match") == "\"7\"")
    }

    @Test func storedMetadataDecodesForInspection() async throws {
        let transport = ScriptedTransport()
        let (cache, directory) = try makeCache(transport)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = URL(string: "http://example.test/meta?q=1")!
        transport.enqueue(status: 200, headers: [("Cache-Control", "max-age=60")], body: "m")
        _ = try await cache.response(for: CacheRequest(url: url))
        let info = try #require(cache.store.allEntries().first)
        let metadata = try #require(StoredEntryMetadata.decode(info.metadata))
        #expect(metadata.url == url.absoluteString && metadata.method == "GET" && metadata.statusText == "OK")
        #expect(metadata.stored.response.status == 200)
        #expect(StoredEntryMetadata.decode(Data("garbage".utf8)) == nil)
    }

    @Test func urlCacheAdapterStoresAndServesThroughOurStore() async throws {
        let transport = ScriptedTransport()
        let (cache, directory) = try makeCache(transport)
        defer { try? FileManager.default.removeItem(at: directory) }
        let adapter = DownloadURLCache(cache: cache)
        let url = URL(string: "http://example.test/u")!
        let request = URLRequest(url: url)
        let response = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                                     headerFields: ["Cache-Control": "max-age=60"]))
        adapter.storeCachedResponse(CachedURLResponse(response: response, data: Data("u".utf8)), for: request)
        let hit = try #require(adapter.cachedResponse(for: request))
        #expect(hit.data == Data("u".utf8))
        #expect((hit.response as? HTTPURLResponse)?.statusCode == 200)
        #expect(adapter.cachedResponse(for: URLRequest(url: URL(string: "http://example.test/u?other")!)) == nil)
        adapter.removeCachedResponse(for: request)
        #expect(adapter.cachedResponse(for: request) == nil)
        #expect(transport.requests.isEmpty)
    }

    @Test func prefetchPinsAndReportsSources() async throws {
        let transport = ScriptedTransport()
        let (cache, directory) = try makeCache(transport)
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
}

/// Thread-safe list of prefetch progress values.
final class PrefetchLog: Sendable {
    private let storage = Mutex<[PrefetchProgress]>([])
    func append(_ value: PrefetchProgress) { storage.withLock { $0.append(value) } }
    var values: [PrefetchProgress] { storage.withLock { $0 } }
}
