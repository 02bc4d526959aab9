import Foundation
import Testing
@testable import CacheStore

/// Pinned entries are never evicted, so a body larger than what they leave of `maxDiskBytes` would evict every
/// unpinned entry and then itself. The store refuses it before writing or evicting anything (`.entryTooLarge`),
/// from the pinned totals the index keeps by triggers; the sweep after a write never evicts the entry just written.
@Suite struct ABodyThatDoesNotFitBesidePinnedEntriesIsRefusedTests {
    func keys(_ store: CacheStore) -> Set<String> { Set(store.allEntries().map(\.key.primary)) }

    func makeStore(_ dir: TemporaryDirectory, _ clock: TestClock) throws -> CacheStore {
        var config = testConfiguration(dir, clock: clock)
        config.maxDiskBytes = 100_000
        return try CacheStore(configuration: config)
    }

    /// 60 KB pinned, two unpinned of 10 KB: 40 KB of room.
    func fill(_ store: CacheStore, _ clock: TestClock) throws {
        try store.store(bytes(60_000), metadata: Data(), for: StoreKey(primary: "pinned"), pinned: true)
        for name in ["a", "b"] {
            clock.advance(1)
            try store.store(bytes(10_000), metadata: Data(), for: StoreKey(primary: name))
        }
        clock.advance(1)
    }

    @Test(arguments: [5_000, 50_000])   // inline and file-backed (both over the 40 KB of room at 45 KB+)
    func aBodyFromMemoryIsRefusedAndNothingIsEvicted(inlineThreshold: Int) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        var config = testConfiguration(dir, clock: clock)
        config.maxDiskBytes = 100_000
        config.inlineThreshold = inlineThreshold
        let store = try CacheStore(configuration: config)
        try fill(store, clock)
        #expect(try store.roomBesidePinnedEntries(for: StoreKey(primary: "big")).bytes == 40_000)
        do {
            try store.store(bytes(45_000), metadata: Data(), for: StoreKey(primary: "big"))
            Issue.record("a body larger than the room beside the pinned entries was stored")
        } catch {
            #expect(error.code == .entryTooLarge)
        }
        #expect(keys(store) == ["pinned", "a", "b"])
        // One that fits is stored, and evicts only what it must (the oldest unpinned entry).
        try store.store(bytes(30_000), metadata: Data(), for: StoreKey(primary: "fits"))
        #expect(keys(store) == ["pinned", "b", "fits"])
        #expect(store.entry(for: StoreKey(primary: "fits"))?.body == bytes(30_000))
    }

    @Test func aStreamedBodyIsRefusedAndItsFileIsLeftToTheCaller() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        let store = try makeStore(dir, clock)
        try fill(store, clock)
        let writer = try store.makeBodyWriter()
        try writer.write(bytes(45_000))
        do {
            try store.commit(writer, metadata: Data(), for: StoreKey(primary: "big"))
            Issue.record("a streamed body larger than the room beside the pinned entries was committed")
        } catch {
            #expect(error.code == .entryTooLarge)
        }
        #expect(try Data(contentsOf: writer.fileURL) == bytes(45_000))
        writer.abort()
        #expect(keys(store) == ["pinned", "a", "b"])
    }

    @Test func theReplacedPinnedEntryDoesNotCountAgainstItsReplacement() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        let store = try makeStore(dir, clock)
        try fill(store, clock)
        #expect(try store.roomBesidePinnedEntries(for: StoreKey(primary: "pinned")).bytes == 100_000)
        try store.store(bytes(95_000), metadata: Data(), for: StoreKey(primary: "pinned"))
        #expect(keys(store) == ["pinned"])
        #expect(store.info(for: StoreKey(primary: "pinned"))?.isPinned == true)
    }

    @Test func thePinnedTotalsFollowPinsReplacementsAndDeletions() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        let store = try makeStore(dir, clock)
        try fill(store, clock)
        let other = StoreKey(primary: "other")
        #expect(try store.roomBesidePinnedEntries(for: other).bytes == 40_000)
        try store.setPinned(true, for: StoreKey(primary: "a"))
        #expect(try store.roomBesidePinnedEntries(for: other).bytes == 30_000)
        try store.store(bytes(20_000), metadata: Data(), for: StoreKey(primary: "a"))   // stays pinned, grows
        #expect(try store.roomBesidePinnedEntries(for: other).bytes == 20_000)
        try store.setPinned(false, for: StoreKey(primary: "pinned"))
        #expect(try store.roomBesidePinnedEntries(for: other).bytes == 80_000)
        try store.remove(StoreKey(primary: "a"))
        #expect(try store.roomBesidePinnedEntries(for: other).bytes == 100_000)
    }

    /// An index set up without the pinned totals (by an earlier version) gets them at the next writable open,
    /// counted from its rows.
    @Test func anIndexWithoutPinnedTotalsGetsThemCountedAtOpen() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        do {
            let store = try makeStore(dir, clock)
            try fill(store, clock)
            try store.withIndex { (index: StoreIndex) throws(CacheStoreError) in
                try index.db.execute("""
                    DROP TRIGGER pinned_insert; DROP TRIGGER pinned_delete; DROP TRIGGER pinned_update;
                    DROP TABLE pinned_totals;
                    """)
            }
            store.close()
        }
        let store = try makeStore(dir, clock)
        defer { store.close() }
        #expect(try store.roomBesidePinnedEntries(for: StoreKey(primary: "big")).bytes == 40_000)
        #expect(throws: CacheStoreError.self) {
            try store.store(bytes(45_000), metadata: Data(), for: StoreKey(primary: "big"))
        }
        try store.setPinned(false, for: StoreKey(primary: "pinned"))
        #expect(try store.roomBesidePinnedEntries(for: StoreKey(primary: "big")).bytes == 100_000)
    }

    /// `maxEntryCount` filled by pinned entries leaves no room for any other entry.
    @Test func pinnedEntriesFillingTheEntryCountLeaveNoRoom() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        var config = testConfiguration(dir, clock: clock)
        config.maxEntryCount = 2
        let store = try CacheStore(configuration: config)
        try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "p1"), pinned: true)
        try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "p2"), pinned: true)
        #expect(try store.roomBesidePinnedEntries(for: StoreKey(primary: "x")).entries == 0)
        #expect(throws: CacheStoreError.self) { try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "x")) }
        #expect(keys(store) == ["p1", "p2"])
    }
}
