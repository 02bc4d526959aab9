import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The data-task calls URLSession makes on its `urlCache` (store and remove with the task) are answered like
/// the request-based calls, for the task's current request.
struct DownloadURLCacheDataTaskTests {
    @Test func storingAndRemovingThroughADataTaskUseItsRequest() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-urlcache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = DownloadCache.Configuration(directory: directory)
        let transport = ScriptedTransport()
        configuration.transport = transport
        configuration.log = { _ in }
        let adapter = DownloadURLCache(cache: try DownloadCache(configuration: configuration))
        let url = try #require(URL(string: "http://example.test/task"))
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: URLRequest(url: url))  // never resumed: nothing is sent
        let response = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                                     headerFields: ["Cache-Control": "max-age=60"]))
        adapter.storeCachedResponse(CachedURLResponse(response: response, data: Data("by task".utf8)), for: task)
        let hit = try #require(adapter.cachedResponse(for: URLRequest(url: url)))
        #expect(hit.data == Data("by task".utf8))
        // A response RFC 9111 may not store is refused through the task call too.
        let other = try #require(URL(string: "http://example.test/no-store"))
        let refused = try #require(HTTPURLResponse(url: other, statusCode: 200, httpVersion: "HTTP/1.1",
                                                    headerFields: ["Cache-Control": "no-store"]))
        adapter.storeCachedResponse(CachedURLResponse(response: refused, data: Data("x".utf8)),
                                    for: session.dataTask(with: URLRequest(url: other)))
        #expect(adapter.cachedResponse(for: URLRequest(url: other)) == nil)
        adapter.removeCachedResponse(for: task)
        #expect(adapter.cachedResponse(for: URLRequest(url: url)) == nil)
        #expect(transport.requests.isEmpty)
    }
}
