import Foundation
import Testing
@testable import CacheStore

/// A partial row whose file name was edited to lead out of `tmp/` (`../../victim`): the store never opens,
/// cuts or deletes that file, whether the partial is resumed, recovered at an exclusive open, or removed.
@Suite struct PartialRowNamingAnotherFileTests {
    /// A store with one kept partial of `key` (10 000 verified bytes) whose row now names `../../victim`, and
    /// the victim: a 50 000-byte file next to the namespace directory.
    private func storeWithEditedRow(_ dir: TemporaryDirectory, key: StoreKey) throws -> (CacheStore, URL) {
        let store = try CacheStore(configuration: testConfiguration(dir))
        let victim = store.directoryURL.deletingLastPathComponent().appendingPathComponent("victim")
        try bytes(50_000, seed: 9).write(to: victim)
        let writer = try store.makeBodyWriter()
        try store.beginPartial(writer, metadata: Data("head".utf8), for: key)
        try writer.write(bytes(10_000, seed: 3))
        #expect(store.keepPartial(writer) == 10_000)
        try store.withIndex { (index: StoreIndex) throws(CacheStoreError) in
            try index.db.execute("UPDATE partials SET file = '../../victim'")
        }
        return (store, victim)
    }

    @Test func resumingDoesNotCutTheFileTheRowNames() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let key = StoreKey(primary: "GET https://example.com/edited")
        let (store, victim) = try storeWithEditedRow(dir, key: key)
        #expect(try store.resumePartial(for: key) == nil)
        #expect(store.partial(for: key) == nil)
        #expect(try Data(contentsOf: victim) == bytes(50_000, seed: 9))
    }

    @Test func recoveryDoesNotCutTheFileTheRowNames() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let key = StoreKey(primary: "GET https://example.com/edited")
        let victim: URL
        do { (_, victim) = try storeWithEditedRow(dir, key: key) }
        let reopened = try CacheStore(configuration: testConfiguration(dir))
        #expect(reopened.partial(for: key) == nil)
        #expect(try Data(contentsOf: victim) == bytes(50_000, seed: 9))
    }

    @Test func removingThePartialDoesNotDeleteTheFileTheRowNames() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let key = StoreKey(primary: "GET https://example.com/edited")
        let (store, victim) = try storeWithEditedRow(dir, key: key)
        try store.removePartial(for: key)
        #expect(store.partial(for: key) == nil)
        #expect(try Data(contentsOf: victim) == bytes(50_000, seed: 9))
    }
}
