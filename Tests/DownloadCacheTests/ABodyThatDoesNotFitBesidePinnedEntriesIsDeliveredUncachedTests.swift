import CacheTestSupport
import DownloadCache
import Foundation
import Testing

/// A body within `maxEntryBytes` that does not fit in what the pinned entries leave of `maxDiskBytes` is
/// delivered whole but not stored, decided before anything is committed or evicted: storing it would evict every
/// unpinned entry and then itself. The response says it was not stored, and why.
@Suite struct ABodyThatDoesNotFitBesidePinnedEntriesIsDeliveredUncachedTests {
    static func pattern(_ size: Int) -> Data { Data((0..<size).map { UInt8($0 % 256) }) }

    @Test(arguments: [40_000, 300_000])   // a body held in memory, and a file-backed one
    func itIsDeliveredAndNothingIsEvicted(size: Int) async throws {
        try await withHarness({
            $0.maxDiskBytes = 1 << 20
            $0.maxEntryBytes = 1 << 20
            $0.inMemoryBodyLimit = 64 << 10
        }) { h in
            // 1,020,000 pinned bytes of 1,048,576: 28,576 bytes of room.
            try await h.origin.configure(path: "/pinned", headers: [("Cache-Control", "max-age=600")], size: 1_020_000)
            _ = try await h.get("/pinned", RequestOptions(pin: true))
            #expect(h.storedVariants("/pinned").first?.isPinned == true)
            for path in ["/s1", "/s2"] {
                try await h.origin.configure(path: path, headers: [("Cache-Control", "max-age=600")], size: 5_000)
                _ = try await h.get(path)
            }
            // The small ones were stored beside the pinned body.
            #expect(h.storedVariants("/s1").count == 1 && h.storedVariants("/s2").count == 1)
            try await h.origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: size)
            let big = try await h.get("/big")
            #expect(big.status == 200 && big.bodySize == Int64(size))
            #expect(try big.data() == Self.pattern(size))
            #expect(big.cacheStatus.stored == false)
            #expect(big.reason.contains(DownloadCache.pinnedRoomWords), "\(big.reason)")
            #expect(h.storedVariants("/big").isEmpty)
            #expect(h.storedVariants("/s1").count == 1 && h.storedVariants("/s2").count == 1)
            #expect(h.storedVariants("/pinned").count == 1)
            _ = try await h.get("/s1")
            #expect(try await h.hits("/s1").total == 1)
        }
    }
}
