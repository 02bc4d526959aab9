import Foundation
import Testing
@testable import CacheStore

/// Hit and miss counters are lifetime totals kept in the index (`dlcache stats` runs in a new process and used to
/// show 0 hits); `sinceOpen` keeps the per-instance counts.
@Suite struct PersistentStatisticsTests {
    @Test func countersAddUpAcrossOpens() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try CacheStore(configuration: testConfiguration(dir))
            try store.store(bytes(100), metadata: Data(), for: StoreKey(primary: "a"))
            _ = store.entry(for: StoreKey(primary: "a"))  // memory hit
            _ = store.entry(for: StoreKey(primary: "a"))  // memory hit
            _ = store.entry(for: StoreKey(primary: "x"))  // memory miss, disk miss
            store.close()
        }
        do {
            var config = testConfiguration(dir)
            config.maxMemoryBytes = 0
            let store = try CacheStore(configuration: config)
            #expect(store.statistics == CacheStoreStatistics(entries: 1, diskBytes: 100, memoryHits: 2, memoryMisses: 1,
                                                             diskHits: 0, diskMisses: 1))
            _ = store.entry(for: StoreKey(primary: "a"))  // disk hit (memory tier off)
            let stats = store.statistics
            #expect(stats.diskHits == 1 && stats.memoryHits == 2)
            #expect(stats.sinceOpen == CacheStoreStatistics.Counters(diskHits: 1))
        }  // closed by deinit
        let store = try CacheStore(configuration: testConfiguration(dir))
        #expect(store.statistics.diskHits == 1)
        #expect(store.statistics.memoryHits == 2)
    }

    /// Two stores open at once stand for two processes: one's counts reach the other through the index when it
    /// writes, when it closes, and every 30 s of disk reads — never on a memory hit, which does no I/O.
    @Test func anotherProcessSeesCountsAfterAWriteAPeriodicFlushOrAClose() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        let reader = try CacheStore(configuration: testConfiguration(dir, clock: clock))
        let observer = try CacheStore(configuration: testConfiguration(dir, clock: clock))
        try reader.store(bytes(100), metadata: Data(), for: StoreKey(primary: "a"))
        _ = reader.entry(for: StoreKey(primary: "a"))
        _ = reader.entry(for: StoreKey(primary: "a"))
        #expect(observer.statistics.memoryHits == 0)  // not written yet
        try reader.store(bytes(100), metadata: Data(), for: StoreKey(primary: "b"))  // a write carries them along
        #expect(observer.statistics.memoryHits == 2)

        _ = reader.entry(for: StoreKey(primary: "a"))
        clock.advance(31)
        _ = reader.entry(for: StoreKey(primary: "a"))  // a memory hit when a flush is due: still no I/O
        #expect(observer.statistics.memoryHits == 2)
        _ = reader.entry(for: StoreKey(primary: "nothing"))  // went to the index: the due flush happens
        let seen = observer.statistics
        #expect(seen.memoryHits == 4 && seen.memoryMisses == 1 && seen.diskMisses == 1)
        #expect(seen.sinceOpen == CacheStoreStatistics.Counters())

        _ = reader.entry(for: StoreKey(primary: "b"))
        reader.close()
        #expect(observer.statistics.memoryHits == 5)
        #expect(reader.statistics.memoryHits == 5)  // the snapshot taken at close
    }

    @Test func aReadOnlyStoreReportsTheTotalsPlusItsOwnCounts() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try CacheStore(configuration: testConfiguration(dir))
            try store.store(bytes(100), metadata: Data(), for: StoreKey(primary: "a"))
            _ = store.entry(for: StoreKey(primary: "a"))
            store.close()
        }
        var config = testConfiguration(dir)
        config.readOnly = true
        let store = try CacheStore(configuration: config)
        _ = store.entry(for: StoreKey(primary: "a"))
        #expect(store.statistics.diskHits == 1)
        #expect(store.statistics.memoryHits == 1)
        store.close()
        let again = try CacheStore(configuration: testConfiguration(dir))
        #expect(again.statistics.diskHits == 0)  // a read-only store writes nothing, counters included
    }
}
