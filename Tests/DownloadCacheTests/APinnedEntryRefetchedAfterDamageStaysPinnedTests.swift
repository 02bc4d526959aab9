import CacheStore
import CacheTestSupport
import DownloadCache
import Foundation
import HTTPCacheSemantics
import Testing

/// A pinned entry whose stored body is found damaged is removed and fetched again; the refetched response
/// replaces it and stays pinned, like any other replacement of a pinned entry.
@Suite struct APinnedEntryRefetchedAfterDamageStaysPinnedTests {
    @Test(arguments: [20_000, 300_000])   // served from memory after its check, and from its blob file
    func theRefetchIsPinned(size: Int) async throws {
        try await withHarness({ $0.inMemoryBodyLimit = 64 << 10; $0.maxMemoryBytes = 0 }) { h in
            try await h.origin.configure(path: "/p", headers: [("Cache-Control", "max-age=600")], size: size)
            _ = try await h.get("/p", RequestOptions(pin: true))
            let key = try #require(h.storedVariants("/p").first).key
            #expect(h.storedVariants("/p").first?.isPinned == true)
            let blob = try #require(h.cache.store.bodyFileURL(for: key, refreshingAccessTime: false))
            try FileDamage.flipByte(of: blob, at: UInt64(size / 2))
            // As a new process would (it has verified nothing yet).
            let second = try h.reopen()
            let again = try await second.response(for: CacheRequest(url: h.origin.url("/p")))
            #expect(again.source == .network)
            #expect(try await h.hits("/p").total == 2)
            let stored = second.store.variants(forPrimaryKey: key.primary)
            #expect(stored.count == 1)
            #expect(stored.first?.isPinned == true)
        }
    }

    @Test func anUnpinnedEntryRefetchedAfterDamageStaysUnpinned() async throws {
        try await withHarness({ $0.inMemoryBodyLimit = 64 << 10; $0.maxMemoryBytes = 0 }) { h in
            try await h.origin.configure(path: "/u", headers: [("Cache-Control", "max-age=600")], size: 300_000)
            _ = try await h.get("/u")
            let key = try #require(h.storedVariants("/u").first).key
            let blob = try #require(h.cache.store.bodyFileURL(for: key, refreshingAccessTime: false))
            try FileDamage.flipByte(of: blob, at: 150_000)
            let second = try h.reopen()
            let again = try await second.response(for: CacheRequest(url: h.origin.url("/u")))
            #expect(again.source == .network)
            #expect(second.store.variants(forPrimaryKey: key.primary).first?.isPinned == false)
        }
    }
}
