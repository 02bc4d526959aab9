import Foundation
import Testing
@testable import CacheStore

/// The memory tier files the variants of one primary key (secondary keys, RFC 9111 §4.1) together: each is found,
/// replaced, evicted and removed on its own.
@Suite struct MemoryTierVariantsTests {
    func entry(_ primary: String, _ variant: String, size: Int, byte: UInt8 = 0) -> StoredEntry {
        let info = EntryInfo(key: StoreKey(primary: primary, variant: variant), metadata: Data(), bodySize: Int64(size),
                             checksum: 0, storageClass: .permanent, isPinned: false,
                             createdAt: Date(timeIntervalSince1970: 0), lastAccessedAt: Date(timeIntervalSince1970: 0))
        return StoredEntry(info: info, body: Data(repeating: byte, count: size))
    }

    func key(_ primary: String, _ variant: String) -> StoreKey { StoreKey(primary: primary, variant: variant) }

    @Test func eachVariantIsItsOwnEntry() {
        let tier = MemoryTier(maxBytes: 10_000, maxEntries: 100, maxEntryBytes: 10_000)
        for (i, variant) in ["", "gzip", "br"].enumerated() { tier.insert(entry("GET /a", variant, size: 10 + i, byte: UInt8(i))) }
        tier.insert(entry("GET /b", "", size: 5))
        #expect(tier.counters().entries == 4)
        for (i, variant) in ["", "gzip", "br"].enumerated() {
            let hit = tier.get(key("GET /a", variant), now: Date(), generation: 0)
            #expect(hit?.body == Data(repeating: UInt8(i), count: 10 + i))
            #expect(hit?.info.key == key("GET /a", variant))
        }
        #expect(tier.get(key("GET /a", "zstd"), now: Date(), generation: 0) == nil)
        #expect(tier.peek(key("GET /b", ""), generation: 0)?.body.count == 5)
    }

    @Test func removingOrReplacingOneVariantKeepsTheOthers() {
        let tier = MemoryTier(maxBytes: 10_000, maxEntries: 100, maxEntryBytes: 10_000)
        for variant in ["", "gzip", "br"] { tier.insert(entry("GET /a", variant, size: 10)) }
        tier.remove(key("GET /a", "gzip"))  // the middle of the chain
        #expect(tier.peekInfo(key("GET /a", "gzip"), generation: 0) == nil)
        #expect(tier.peekInfo(key("GET /a", ""), generation: 0) != nil)
        #expect(tier.peekInfo(key("GET /a", "br"), generation: 0) != nil)
        tier.remove(key("GET /a", "br"))  // the first one (last inserted)
        #expect(tier.peekInfo(key("GET /a", ""), generation: 0) != nil)
        tier.insert(entry("GET /a", "", size: 20, byte: 7))  // replaced
        #expect(tier.peek(key("GET /a", ""), generation: 0)?.body == Data(repeating: 7, count: 20))
        #expect(tier.counters().entries == 1)
        #expect(tier.counters().bytes == 20)
        tier.update(key("GET /a", "")) { $0.isPinned = true }
        #expect(tier.peekInfo(key("GET /a", ""), generation: 0)?.isPinned == true)
        #expect(tier.counters().entries == 1)
    }

    @Test func evictionAndPredicatesReachEveryVariant() {
        let tier = MemoryTier(maxBytes: 10_000, maxEntries: 3, maxEntryBytes: 10_000)
        for variant in ["a", "b", "c", "d"] { tier.insert(entry("GET /x", variant, size: 10)) }
        #expect(tier.counters().entries == 3)
        #expect(tier.peekInfo(key("GET /x", "a"), generation: 0) == nil)  // the least recently used
        tier.remove { $0.variant == "c" }
        #expect(tier.peekInfo(key("GET /x", "c"), generation: 0) == nil)
        #expect(tier.peekInfo(key("GET /x", "b"), generation: 0) != nil)
        #expect(tier.peekInfo(key("GET /x", "d"), generation: 0) != nil)
        #expect(tier.counters().entries == 2)
        #expect(tier.trim(toBytes: 0) == 2)
        #expect(tier.counters().entries == 0)
        #expect(tier.counters().bytes == 0)
    }

    @Test func aLongChainOfVariantsIsFreedWithoutTrouble() {
        let tier = MemoryTier(maxBytes: 1 << 30, maxEntries: 10_000, maxEntryBytes: 1 << 20)
        for i in 0..<3_000 { tier.insert(entry("GET /many", "v\(i)", size: 1)) }
        #expect(tier.counters().entries == 3_000)
        #expect(tier.get(key("GET /many", "v0"), now: Date(), generation: 0) != nil)
        tier.remove(where: nil)
        #expect(tier.counters().entries == 0)
    }
}
