import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// A broken cache never breaks a download; a scripted transport sees hits and conditional requests; metadata round trips.
@Suite struct ResilienceTests {
    @Test func downloadSucceedsWhenTheStoreDirectoryIsGone() async throws {
        let transport = ScriptedTransport()
        transport.enqueue(status: 200, headers: [("Cache-Control", "max-age=60")], body: "still works")
        let (cache, directory) = try makeScriptedCache(transport)
        try FileManager.default.removeItem(at: directory)
        let response = try await cache.response(for: CacheRequest(url: URL(string: "http://example.test/a")!))
        #expect(response.status == 200 && response.text == "still works" && response.source == .network)
    }

    @Test func scriptedFreshHitSendsNothingAndStaleSendsAConditionalRequest() async throws {
        let transport = ScriptedTransport()
        let clock = FixedClock()
        let (cache, directory) = try makeScriptedCache(transport, clock: clock)
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
        let (cache, directory) = try makeScriptedCache(transport)
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
}
