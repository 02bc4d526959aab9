import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// Through the client: a stored body zeroed by an unclean shutdown (the default durability does not fsync
/// bodies) is never served by the next process; it refetches from the origin and serves the right bytes. A
/// download cut short by a kill leaves its file in the store's `tmp/`, removed by the next opener alone.
@Suite(.serialized) struct UncleanShutdownIntegrationTests {
    @Test func aZeroedStoredBodyIsRefetchedNotServed() async throws {
        try await withHarness({ $0.maxMemoryBytes = 0 }) { h in
            try await h.origin.configure(path: "/doc", headers: [("Cache-Control", "max-age=600")], size: 100_000)
            let first = try await h.get("/doc")
            let expected = try first.data()
            #expect(expected.count == 100_000)
            let blob = try #require(h.storedVariants("/doc").first.flatMap { h.cache.store.bodyFileURL(for: $0.key) })
            // The disk after a power cut: the blob's data never reached it.
            let handle = try FileHandle(forWritingTo: blob)
            try handle.write(contentsOf: Data(count: expected.count))
            try handle.close()

            let next = try h.reopen()
            let response = try await next.response(for: CacheRequest(url: h.origin.url("/doc")))
            #expect(response.source == .network)
            #expect(try response.data() == expected)
            #expect(try await h.hits("/doc").total == 2)
            await next.close()
        }
    }

    /// A download cut short by a kill (its file left in the store's `tmp/`) is removed when the cache
    /// is next opened by a process alone.
    @Test func leftoverDownloadIsRemovedAtTheNextOpen() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("dlcache-leftover-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.log = { _ in }
        var leftover: URL?
        do {
            let cache = try DownloadCache(configuration: configuration)
            let file = cache.store.directoryURL.appendingPathComponent("tmp/download-killed")
            #expect(FileManager.default.createFile(atPath: file.path, contents: Data(count: 1_000)))
            leftover = file
        }
        let file = try #require(leftover)
        #expect(FileManager.default.fileExists(atPath: file.path))
        _ = try DownloadCache(configuration: configuration)
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }
}
