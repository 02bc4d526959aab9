import CacheTestSupport
import DownloadCache
import HTTPCacheSemantics
import Foundation
import Testing

// The code between the BEGIN/END README lines is the "## Library" snippet of README.md, verbatim (after its
// three imports: DownloadCache, Foundation for URL, HTTPCacheSemantics for CacheRequest);
// it compiles and runs here (against the loopback origin) so the README cannot drift from the API.

// BEGIN README
/// Reads an article through the cache, pre-caches the next ones, then reads one without the network.
func readArticles(from site: URL, cacheDirectory: URL) async throws -> [ResponseSource] {
    var configuration = DownloadCache.Configuration(directory: cacheDirectory, namespace: "articles")
    configuration.maxDiskBytes = 200 << 20          // bytes; least recently used entries are evicted first
    let cache = try DownloadCache(configuration: configuration)

    // Every call's outcome, e.g. for a log or a network activity indicator.
    let events = cache.events
    let listener = Task {
        for await event in events {
            if event.kind == .succeeded, let source = event.source { print("\(event.url.path): \(source)") }
        }
    }
    defer { listener.cancel() }

    // RFC 9111 by default: the first call downloads and stores, the second is served from disk.
    let article = CacheRequest(url: site.appendingPathComponent("article.html"))
    let first = try await cache.response(for: article, options: RequestOptions())
    let second = try await cache.response(for: article, options: RequestOptions())
    print(first.source, second.source)              // network cache

    // Keep this one 10 minutes (seconds) whatever the server's lifetime, renewed on each hit.
    let feed = try await cache.download(site.appendingPathComponent("feed.json"), expiration: .sliding(600))
    print(String(decoding: try feed.data(), as: UTF8.self))

    // Pre-cache the next articles for the subway; pinned entries are never evicted.
    let next = (2...4).map { site.appendingPathComponent("article\($0).html") }
    let report = await cache.prefetch(next, pin: true)
    print("\(report.succeeded.count) prefetched, \(report.failed.count) failed")

    // Offline: answer only from the cache, never touch the network (throws .notCached when absent).
    let offline = RequestOptions(policy: .returnCacheDataDontLoad)
    let stored = try await cache.response(for: CacheRequest(url: next[0]), options: offline)
    return [first.source, second.source, feed.source, stored.source]
}
// END README

@Suite("README library example")
struct DownloadCacheReadmeExampleTests {
    @Test("the README example downloads, hits, prefetches with pins and answers offline from the cache")
    func readmeExample() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("dlcache-readme-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await origin.configure(path: "/article.html", headers: [("Cache-Control", "max-age=300")],
                                   body: "<h1>Read me on the subway</h1>")
        try await origin.configure(path: "/feed.json", headers: [("Cache-Control", "max-age=0")], body: "[1,2,3]")
        for n in 2...4 {
            try await origin.configure(path: "/article\(n).html", headers: [("Cache-Control", "max-age=300")],
                                       body: "<h1>Article \(n)</h1>")
        }

        let sources = try await readArticles(from: origin.baseURL, cacheDirectory: directory)
        #expect(sources == [.network, .cache, .network, .cache])
        #expect(try await origin.hits("/article.html").total == 1)
        #expect(try await origin.hits("/article2.html").total == 1)

        // Afterwards (another process): the prefetched articles are pinned, and the feed's 600 s override
        // (the server said max-age=0) still holds, so it is a hit.
        var configuration = DownloadCache.Configuration(directory: directory, namespace: "articles")
        configuration.log = { _ in }
        let reopened = try DownloadCache(configuration: configuration)
        let pinned = reopened.entryDescriptions(for: origin.url("/article3.html"))
        #expect(pinned.count == 1)
        #expect(pinned.first?.isPinned == true)
        #expect(reopened.entryDescriptions(for: origin.url("/article.html")).first?.isPinned == false)
        let feed = try await reopened.download(origin.url("/feed.json"), expiration: .sliding(600))
        #expect(feed.source == .cache)
        #expect(try feed.data() == Data("[1,2,3]".utf8))
        #expect(try await origin.hits("/feed.json").total == 1)
    }

    @Test("README.md's \"Library\" snippet is this file's README block, verbatim")
    func readmeMatches() throws {
        let (readme, found) = try ReadmeSnippet.load(from: #filePath)
        let snippet = try #require(found)
        #expect(snippet.contains("cache.prefetch("))
        #expect(readme.contains("## Library"))
        #expect(readme.contains("```swift\nimport DownloadCache\nimport Foundation\nimport HTTPCacheSemantics\n\n" + snippet + "```"))
    }
}
