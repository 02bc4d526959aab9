import Foundation
import Testing
@testable import CacheStore

/// `peekEntry(for:)` reads an entry back like `entry(for:)` — verified, a damaged one deleted — without it
/// counting as a use: no hit or miss, no access time, no memory-tier insert.
@Suite struct PeekEntryTests {
    @Test func aPeekIsNotAUse() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        let store = try CacheStore(configuration: testConfiguration(dir, clock: clock))
        let key = StoreKey(primary: "k")
        try store.store(Data(repeating: 7, count: 20_000), metadata: Data("m".utf8), for: key)
        let storedAt = try #require(store.info(for: key)).lastAccessedAt
        clock.advance(100)
        store.dropMemoryTier()
        let before = store.statistics
        #expect(store.peekEntry(for: key)?.body == Data(repeating: 7, count: 20_000))
        #expect(store.peekEntry(for: StoreKey(primary: "absent")) == nil)
        let after = store.statistics
        #expect(after.memoryHits == before.memoryHits && after.memoryMisses == before.memoryMisses)
        #expect(after.diskHits == before.diskHits && after.diskMisses == before.diskMisses)
        #expect(after.memoryEntries == 0)
        try store.store(Data("other".utf8), metadata: Data(), for: StoreKey(primary: "other"))  // writes pending access times
        #expect(try #require(store.allEntries().first { $0.key == key }).lastAccessedAt == storedAt)
        // A real use counts.
        _ = store.entry(for: key)
        #expect(store.statistics.diskHits == before.diskHits + 1)
    }

    @Test func aDamagedBodyIsNotReturnedByAPeek() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let key = StoreKey(primary: "k")
        try store.store(Data(repeating: 1, count: 50_000), metadata: Data(), for: key)
        store.dropMemoryTier()
        let blob = try #require(try FileManager.default.contentsOfDirectory(atPath: dir.url.path + "/default/blobs").first)
        let path = dir.url.path + "/default/blobs/" + blob
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seek(toOffset: 10)
        try handle.write(contentsOf: Data([0xFF]))
        try handle.close()
        #expect(store.peekEntry(for: key) == nil)
        #expect(store.info(for: key) == nil)
    }
}
