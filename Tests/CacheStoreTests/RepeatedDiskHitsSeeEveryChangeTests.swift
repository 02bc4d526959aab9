import CacheTestSupport
import Foundation
import Testing
@testable import CacheStore

/// Repeated disk hits (memory tier off) share a read transaction and read a cached row's inline body by rowid;
/// neither may serve what a committed change replaced, nor pair a body with another version's information.
@Suite struct RepeatedDiskHitsSeeEveryChangeTests {
    func diskOnly(_ dir: TemporaryDirectory) -> CacheStore.Configuration {
        var config = testConfiguration(dir)
        config.maxMemoryBytes = 0
        return config
    }

    @Test func aBurstOfHitsSeesAnotherStoresReplacementAndRemovalAtOnce() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let reader = try CacheStore(configuration: diskOnly(dir))
        let writer = try CacheStore(configuration: diskOnly(dir))
        defer { reader.close(); writer.close() }
        let inline = StoreKey(primary: "inline")
        let file = StoreKey(primary: "file")
        try writer.store(bytes(100, seed: 1), metadata: Data("v1".utf8), for: inline)
        try writer.store(bytes(20_000, seed: 1), metadata: Data("v1".utf8), for: file)
        for _ in 0..<50 {
            #expect(reader.entry(for: inline)?.body == bytes(100, seed: 1))
            #expect(reader.entry(for: file)?.body == bytes(20_000, seed: 1))
        }
        try writer.store(bytes(100, seed: 2), metadata: Data("v2".utf8), for: inline)
        try writer.store(bytes(20_000, seed: 2), metadata: Data("v2".utf8), for: file)
        let replacedInline = reader.entry(for: inline)
        #expect(replacedInline?.body == bytes(100, seed: 2))
        #expect(replacedInline?.info.metadata == Data("v2".utf8))
        #expect(reader.entry(for: file)?.body == bytes(20_000, seed: 2))
        for _ in 0..<50 { _ = reader.entry(for: inline) }
        try writer.remove(inline)
        #expect(reader.entry(for: inline) == nil)
        // The reader's own write in the middle of a burst commits, and its next hit reads it.
        for _ in 0..<50 { _ = reader.entry(for: file) }
        try reader.store(bytes(100, seed: 3), metadata: Data("v3".utf8), for: inline)
        #expect(reader.entry(for: inline)?.body == bytes(100, seed: 3))
        #expect(writer.entry(for: inline)?.body == bytes(100, seed: 3))
    }

    @Test func aCachedInlineRowChangedWithoutANewGenerationIsReadInFull() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: diskOnly(dir))
        defer { store.close() }
        let key = StoreKey(primary: "k")
        try store.store(bytes(100, seed: 1), metadata: Data("v1".utf8), for: key)
        #expect(store.entry(for: key)?.info.metadata == Data("v1".utf8))  // the row is cached now
        // A commit whose generation bump has not happened yet: the same rowid, another version of the row.
        let body = bytes(100, seed: 2)
        try store.withIndex { (index: StoreIndex) throws(CacheStoreError) in
            try index.db.execute("""
                UPDATE entries SET inline_body = X'\(body.map { String(format: "%02x", $0) }.joined())',
                    crc = \(BlobFiles.checksum(body)), metadata = CAST('v2' AS BLOB), created = created + 1
                """)
        }
        let entry = store.entry(for: key)
        #expect(entry?.body == body)
        #expect(entry?.info.metadata == Data("v2".utf8))
        #expect(store.allEntries().count == 1, "nothing was taken for damage")
    }

    @Test func aDamagedInlineBodyIsAMissAlsoWhenItsRowIsCached() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: diskOnly(dir))
        defer { store.close() }
        let key = StoreKey(primary: "k")
        try store.store(bytes(100), metadata: Data(), for: key)
        for _ in 0..<10 { #expect(store.entry(for: key)?.body == bytes(100)) }
        try store.withIndex { (index: StoreIndex) throws(CacheStoreError) in
            try index.db.execute("UPDATE entries SET inline_body = zeroblob(100)")
        }
        #expect(store.entry(for: key) == nil)
        #expect(store.allEntries().isEmpty)
    }
}
