import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `DownloadURLCache`: the `URLCache` adapter stores and serves through this cache's store.
@Suite struct DownloadURLCacheTests {
    @Test func urlCacheAdapterStoresAndServesThroughOurStore() async throws {
        let transport = ScriptedTransport()
        let (cache, directory) = try makeScriptedCache(transport)
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
}
