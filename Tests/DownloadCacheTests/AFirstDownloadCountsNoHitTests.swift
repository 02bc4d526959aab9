import CacheTestSupport
import DownloadCache
import CacheStore
import Foundation
import Testing

/// The store's hit and miss counts (`dlcache stats`) count uses of the cache: a first download is one miss, and
/// reading back the body it just stored is not a hit.
@Suite struct AFirstDownloadCountsNoHitTests {
    @Test(arguments: [100, 9_000_000])  // in memory, and above inMemoryBodyLimit (a blob file)
    func aFirstDownloadIsOneMissAndNoHit(size: Int) async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/d", headers: [("Cache-Control", "max-age=600")], size: size)
            let first = try await h.get("/d")
            #expect(first.bodySize == Int64(size))
            var counts = h.cache.store.statistics
            #expect(counts.diskHits == 0 && counts.memoryHits == 0)
            #expect(counts.diskMisses == 1)
            _ = try await h.get("/d")
            counts = h.cache.store.statistics
            #expect(counts.diskHits + counts.memoryHits == 1)
            #expect(counts.diskMisses == 1)
            #expect(try await h.origin.hits("/d").total == 1)
        }
    }
}
