import Foundation
import Testing
@testable import CacheStore

@Suite struct MemoryTierTests {
    func entry(_ key: String, size: Int) -> StoredEntry {
        let info = EntryInfo(key: StoreKey(primary: key), metadata: Data(), bodySize: Int64(size), checksum: 0,
                             storageClass: .permanent, isPinned: false, createdAt: Date(timeIntervalSince1970: 0),
                             lastAccessedAt: Date(timeIntervalSince1970: 0))
        return StoredEntry(info: info, body: Data(count: size))
    }

    @Test func evictsTheLeastRecentlyUsedEntryFirst() {
        let tier = MemoryTier(maxBytes: 300, maxEntries: 10, maxEntryBytes: 1_000)
        for key in ["a", "b", "c"] { tier.insert(entry(key, size: 100)) }
        #expect(tier.get(StoreKey(primary: "a"), now: Date(), generation: 0) != nil)
        tier.insert(entry("d", size: 100))  // evicts b, the least recently used
        #expect(tier.peekInfo(StoreKey(primary: "b"), generation: 0) == nil)
        #expect(tier.peekInfo(StoreKey(primary: "a"), generation: 0) != nil)
        #expect(tier.counters().bytes == 300)
        #expect(tier.counters().entries == 3)
    }

    @Test func entryCountIsBoundedAndOversizedEntriesAreSkipped() {
        let tier = MemoryTier(maxBytes: 10_000, maxEntries: 2, maxEntryBytes: 500)
        for key in ["a", "b", "c"] { tier.insert(entry(key, size: 10)) }
        #expect(tier.counters().entries == 2)
        tier.insert(entry("big", size: 501))
        #expect(tier.peekInfo(StoreKey(primary: "big"), generation: 0) == nil)
    }

    @Test func hitsRecordAccessTimesForTheIndex() {
        let tier = MemoryTier(maxBytes: 1_000, maxEntries: 10, maxEntryBytes: 1_000)
        tier.insert(entry("a", size: 10))
        let t1 = Date(timeIntervalSince1970: 100)
        let t2 = Date(timeIntervalSince1970: 200)
        _ = tier.get(StoreKey(primary: "a"), now: t1, generation: 0)
        _ = tier.get(StoreKey(primary: "a"), now: t2, generation: 0)
        let dirty = tier.takeDirty()
        #expect(dirty.count == 1)
        #expect(dirty.first?.1 == 200)
        #expect(tier.takeDirty().isEmpty)
        #expect(tier.counters().hits == 2)
    }

    @Test func aNewGenerationEmptiesTheTier() {
        let tier = MemoryTier(maxBytes: 1_000, maxEntries: 10, maxEntryBytes: 1_000)
        tier.insert(entry("a", size: 10))
        #expect(tier.get(StoreKey(primary: "a"), now: Date(), generation: 0) != nil)
        #expect(tier.get(StoreKey(primary: "a"), now: Date(), generation: 1) == nil)
        #expect(tier.counters().entries == 0)
    }

    @Test func aStaleReadCannotRepopulateAfterAnInvalidation() {
        let tier = MemoryTier(maxBytes: 1_000, maxEntries: 10, maxEntryBytes: 1_000)
        let epoch = tier.epoch
        tier.remove(StoreKey(primary: "a"))  // a concurrent write invalidated "a" after our disk read began
        tier.insert(entry("a", size: 10), ifEpoch: epoch)
        #expect(tier.peekInfo(StoreKey(primary: "a"), generation: 0) == nil)
    }

    @Test func twoStoresOnOneDirectorySeeEachOthersWrites() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let a = try CacheStore(configuration: testConfiguration(dir))
        let b = try CacheStore(configuration: testConfiguration(dir))
        let key = StoreKey(primary: "shared")
        try a.store(Data("one".utf8), metadata: Data(), for: key)
        #expect(b.entry(for: key)?.body == Data("one".utf8))
        #expect(b.entry(for: key)?.body == Data("one".utf8))  // now from b's memory tier
        #expect(b.statistics.memoryHits == 1)
        try a.store(Data("two".utf8), metadata: Data(), for: key)
        #expect(b.entry(for: key)?.body == Data("two".utf8))
        try a.remove(key)
        #expect(b.entry(for: key) == nil)
        try b.store(bytes(20_000), metadata: Data(), for: key)
        #expect(a.entry(for: key)?.body == bytes(20_000))
    }

    @Test func cachedIndexRowsFollowAnotherStoresWrites() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var config = testConfiguration(dir)
        config.maxMemoryBytes = 0  // disk tier only: exercises the row cache
        let a = try CacheStore(configuration: config)
        let b = try CacheStore(configuration: config)
        let key = StoreKey(primary: "shared")
        try a.store(bytes(30_000, seed: 1), metadata: Data("1".utf8), for: key)
        #expect(b.entry(for: key)?.body == bytes(30_000, seed: 1))
        #expect(b.entry(for: key)?.body == bytes(30_000, seed: 1))  // row from b's cache
        try a.store(bytes(31_000, seed: 2), metadata: Data("2".utf8), for: key)
        #expect(b.entry(for: key)?.body == bytes(31_000, seed: 2))
        try a.updateMetadata(Data("3".utf8), for: key)
        #expect(b.info(for: key)?.metadata == Data("3".utf8))
        try a.remove(key)
        #expect(b.entry(for: key) == nil)
        #expect(b.bodyFileURL(for: key) == nil)
        #expect(b.statistics.diskMisses == 1)
    }

    /// With the default clock a memory hit reads the coarse real-time clock (a few ms behind a precise read): the
    /// access time it reports never goes back before the entry was stored or last accessed.
    @Test func aHitWithTheCoarseClockNeverReportsAnEarlierAccessTime() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var config = CacheStore.Configuration(directory: dir.url)
        config.logger = { _ in }
        let store = try CacheStore(configuration: config)
        for i in 0..<200 {
            let key = StoreKey(primary: "k\(i)")
            let stored = try store.store(bytes(100), metadata: Data(), for: key)
            let first = try #require(store.entry(for: key))
            let second = try #require(store.entry(for: key))
            #expect(first.info.lastAccessedAt >= stored.createdAt)
            #expect(second.info.lastAccessedAt >= first.info.lastAccessedAt)
        }
        #expect(store.statistics.sinceOpen.memoryHits == 400)
    }
}
