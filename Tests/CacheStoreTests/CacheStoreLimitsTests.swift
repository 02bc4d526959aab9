import Foundation
import Testing
@testable import CacheStore

@Suite struct CacheStoreLimitsTests {
    /// Stores `count` entries of `size` bytes, one clock second apart, keys "0", "1", ...
    func fill(_ store: CacheStore, _ clock: TestClock, count: Int, size: Int, pinned: Set<Int> = []) throws {
        for i in 0..<count {
            try store.store(bytes(size, seed: UInt8(i % 250)), metadata: Data(), for: StoreKey(primary: "\(i)"),
                            pinned: pinned.contains(i))
            clock.advance(1)
        }
    }

    func keys(_ store: CacheStore) -> Set<String> { Set(store.allEntries().map(\.key.primary)) }

    @Test(arguments: [0, 1 << 20])  // memory tier off, and on (its hits must reach the disk tier's LRU order)
    func evictionIsLeastRecentlyUsedFirst(memoryBytes: Int) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        var config = testConfiguration(dir, clock: clock)
        config.maxDiskBytes = 5 * 20_000
        config.maxMemoryBytes = memoryBytes
        let store = try CacheStore(configuration: config)
        try fill(store, clock, count: 5, size: 20_000)
        // Touch 0 and 1: now 2 is the least recently used.
        #expect(store.entry(for: StoreKey(primary: "0")) != nil)
        clock.advance(1)
        #expect(store.entry(for: StoreKey(primary: "1")) != nil)
        clock.advance(1)
        try store.store(bytes(20_000), metadata: Data(), for: StoreKey(primary: "5"))
        #expect(keys(store) == ["0", "1", "3", "4", "5"])
        clock.advance(1)
        try store.store(bytes(30_000), metadata: Data(), for: StoreKey(primary: "6"))
        #expect(keys(store) == ["0", "1", "5", "6"])  // 3 and 4 went: 30 KB needed two evictions
        #expect(store.statistics.diskBytes <= 5 * 20_000)
        #expect(store.statistics.diskBytes == bytesOnDisk(store))
        #expect(store.entry(for: StoreKey(primary: "3")) == nil)
    }

    /// `dlcache get --max-disk` answered from the cache trims at open: with nothing to remove, that must not
    /// make the store a writer (a session marker, synced commits and a synced closing checkpoint).
    @Test func aTrimWithNothingToRemoveWritesNothing() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        var config = testConfiguration(dir, clock: clock)
        config.maxDiskBytes = 10 * 1_000
        config.maxAge = 100
        do {
            let writer = try CacheStore(configuration: config)
            try fill(writer, clock, count: 3, size: 1_000)
            writer.close()
        }
        let reader = try CacheStore(configuration: config)
        defer { reader.close() }
        #expect(reader.entry(for: StoreKey(primary: "2")) != nil)
        try reader.trim()
        #expect(reader.sessionMarkerCreated.withLock { $0 } == false)
        #expect(keys(reader) == ["0", "1", "2"])
        // Something to remove: the trim writes as before (0 and 1 unused for more than maxAge; 2 was just read).
        clock.advance(99)
        #expect(reader.entry(for: StoreKey(primary: "2")) != nil)
        clock.advance(2)
        try reader.trim()
        #expect(reader.sessionMarkerCreated.withLock { $0 } == true)
        #expect(keys(reader) == ["2"])
    }

    @Test func pinnedEntriesAreNeverEvicted() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        var config = testConfiguration(dir, clock: clock)
        config.maxEntryCount = 3
        config.maxAge = 100
        let store = try CacheStore(configuration: config)
        try fill(store, clock, count: 6, size: 100, pinned: [0, 1])
        #expect(keys(store) == ["0", "1", "5"])
        clock.advance(1_000)
        try store.trim()
        #expect(keys(store) == ["0", "1"])
        try store.setPinned(false, for: StoreKey(primary: "0"))
        try store.trim()
        #expect(keys(store) == ["1"])
        #expect(store.info(for: StoreKey(primary: "1"))?.isPinned == true)
    }

    @Test func pinningByPrimaryKeyCoversEveryVariant() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        var config = testConfiguration(dir, clock: clock)
        config.maxAge = 10
        let store = try CacheStore(configuration: config)
        try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "p", variant: "a"))
        try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "p", variant: "b"))
        try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "q"))
        try store.setPinned(true, forPrimaryKey: "p")
        clock.advance(60)
        try store.trim()
        #expect(store.allEntries().map(\.key.primary) == ["p", "p"])
        #expect(throws: CacheStoreError.self) { try store.setPinned(true, forPrimaryKey: "absent") }
    }

    @Test func maxAgeCountsFromLastAccess() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        var config = testConfiguration(dir, clock: clock)
        config.maxAge = 100
        config.maxMemoryBytes = 0
        let store = try CacheStore(configuration: config)
        try fill(store, clock, count: 2, size: 10)
        clock.advance(80)
        _ = store.entry(for: StoreKey(primary: "0"))
        clock.advance(50)
        try store.trim()
        #expect(keys(store) == ["0"])
    }

    @Test func theDefaultMaxAgeIsOneWeek() {
        let config = CacheStore.Configuration(directory: URL(fileURLWithPath: "/tmp"))
        #expect(config.maxAge == TimeInterval(7 * 24 * 3600))
        #expect(config.maxDiskBytes == 1 << 30)
        #expect(config.namespace == "default")
    }

    @Test func sessionEntriesAreGoneAfterReopenAndClearSession() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try CacheStore(configuration: testConfiguration(dir))
            try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "s1"), storageClass: .session)
            try store.store(bytes(50_000), metadata: Data(), for: StoreKey(primary: "s2"), storageClass: .session)
            try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "p"))
            #expect(store.entry(for: StoreKey(primary: "s2")) != nil)
            // Deterministic: closing does not depend on when the last reference goes (see CloseTests).
            store.close()
        }
        let store = try CacheStore(configuration: testConfiguration(dir))
        #expect(keys(store) == ["p"])
        #expect(store.statistics.diskBytes == 10)
        #expect(bytesOnDisk(store) == 10)
        try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "s3"), storageClass: .session)
        #expect(store.entry(for: StoreKey(primary: "s3")) != nil)
        try store.clearSession()
        #expect(store.entry(for: StoreKey(primary: "s3")) == nil)
        #expect(keys(store) == ["p"])
    }

    @Test func memoryTierIsBoundedInBytesAndEntries() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var config = testConfiguration(dir)
        config.maxMemoryBytes = 1_000
        config.maxMemoryEntries = 3
        let store = try CacheStore(configuration: config)
        for i in 0..<5 { try store.store(bytes(100), metadata: Data(), for: StoreKey(primary: "\(i)")) }
        #expect(store.statistics.memoryEntries == 3)
        #expect(store.statistics.memoryBytes == 300)
        try store.store(bytes(900), metadata: Data(), for: StoreKey(primary: "big"))
        #expect(store.statistics.memoryBytes <= 1_000)
        try store.store(bytes(2_000), metadata: Data(), for: StoreKey(primary: "huge"))
        #expect(store.statistics.memoryBytes <= 1_000)
        #expect(store.entry(for: StoreKey(primary: "huge"))?.body == bytes(2_000))  // from disk
        #expect(store.statistics.diskHits == 1)
        #expect(store.statistics.entries == 7)  // disk keeps everything
    }

    @Test func accountingMatchesTheFilesAfterAMixedSequence() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        var config = testConfiguration(dir, clock: clock)
        config.maxDiskBytes = 400_000
        var generator = SystemRandomNumberGenerator()
        let store = try CacheStore(configuration: config)
        for step in 0..<300 {
            let key = StoreKey(primary: "\(Int.random(in: 0..<40, using: &generator))")
            switch Int.random(in: 0..<10, using: &generator) {
            case 0: try store.remove(key)
            case 1: try? store.updateMetadata(Data("\(step)".utf8), for: key)
            case 2: _ = store.entry(for: key)
            default:
                try store.store(bytes(Int.random(in: 0..<60_000, using: &generator)), metadata: Data(), for: key)
            }
            clock.advance(1)
        }
        #expect(store.statistics.diskBytes == bytesOnDisk(store))
        #expect(store.statistics.diskBytes <= 400_000)
        #expect(store.verify(repair: false).ok)
    }

    @Test func expiredEntriesAreDeletedWhenTheStoreIsOpened() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        var config = testConfiguration(dir, clock: clock)
        config.maxAge = 3_600
        do {
            let store = try CacheStore(configuration: config)
            try store.store(bytes(20_000), metadata: Data(), for: StoreKey(primary: "old"))
            try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "pinned"), pinned: true)
            clock.advance(3_000)
            try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "recent"))
        }
        clock.advance(1_000)
        let store = try CacheStore(configuration: config)
        #expect(keys(store) == ["pinned", "recent"])
        #expect(store.statistics.diskBytes == bytesOnDisk(store))
    }

    @Test func sessionEntriesSurviveWhileAnotherStoreHasTheNamespaceOpen() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let first = try CacheStore(configuration: testConfiguration(dir))
        try first.store(bytes(10), metadata: Data(), for: StoreKey(primary: "s"), storageClass: .session)
        let second = try CacheStore(configuration: testConfiguration(dir))
        #expect(second.entry(for: StoreKey(primary: "s")) != nil)
        #expect(first.entry(for: StoreKey(primary: "s")) != nil)
    }
}
