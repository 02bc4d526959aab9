import Foundation
import Testing
@testable import CacheStore

/// `storeReturningBodyFile` tells the caller which blob file holds the body it just stored (nil for an inline
/// body) — the file the index names for the entry, holding exactly those bytes — without a lookup counting as
/// a use (no hit, no access time).
@Suite struct StoringReportsItsBodyFileTests {
    @Test func aFileBackedBodyReportsTheBlobTheIndexNames() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        let store = try CacheStore(configuration: testConfiguration(dir, clock: clock))
        let key = StoreKey(primary: "k")
        let body = bytes(40_000, seed: 3)
        let before = store.statistics
        let stored = try store.storeReturningBodyFile(body, metadata: Data("m".utf8), for: key)
        let file = try #require(stored.bodyFile)
        #expect(file == store.bodyFileURL(for: key, refreshingAccessTime: false))
        #expect(try Data(contentsOf: file) == body)
        #expect(stored.info.bodySize == Int64(body.count))
        let after = store.statistics
        #expect(after.diskHits == before.diskHits && after.diskMisses == before.diskMisses)
    }

    @Test func anInlineBodyReportsNoFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let key = StoreKey(primary: "small")
        let stored = try store.storeReturningBodyFile(Data("tiny".utf8), metadata: Data(), for: key)
        #expect(stored.bodyFile == nil)
        #expect(store.bodyFileURL(for: key, refreshingAccessTime: false) == nil)
        #expect(store.entry(for: key)?.body == Data("tiny".utf8))
    }

    @Test func aReplacedEntryReportsItsNewFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let key = StoreKey(primary: "k")
        let first = try #require(try store.storeReturningBodyFile(bytes(30_000, seed: 1), metadata: Data(), for: key).bodyFile)
        let second = try #require(try store.storeReturningBodyFile(bytes(30_000, seed: 2), metadata: Data(), for: key).bodyFile)
        #expect(first != second)
        #expect(!FileManager.default.fileExists(atPath: first.path))
        #expect(try Data(contentsOf: second) == bytes(30_000, seed: 2))
    }
}
