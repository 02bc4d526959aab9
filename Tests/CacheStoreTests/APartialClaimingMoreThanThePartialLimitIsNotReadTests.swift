import Foundation
import Testing
@testable import CacheStore

/// A partial's verified count comes from an index another program may have edited. No partial grows past the
/// partial limit (`partialByteLimit`, the disk limit), so one claiming more is dropped before its file is read: a
/// planted sparse file the size of the claim would otherwise be checksummed to its end before the resume could start.
@Suite struct APartialClaimingMoreThanThePartialLimitIsNotReadTests {
    /// A store with a 64 MiB disk limit holding a kept partial of 10,000 bytes for `key`.
    private func storeWithAPartial(_ dir: TemporaryDirectory, _ key: StoreKey) throws -> CacheStore {
        var config = testConfiguration(dir)
        config.maxDiskBytes = 64 << 20
        config.maxEntryBytes = 1 << 20
        let store = try CacheStore(configuration: config)
        let writer = try store.makeBodyWriter()
        try store.beginPartial(writer, metadata: Data("head".utf8), for: key)
        try writer.write(bytes(10_000, seed: 3))
        #expect(store.keepPartial(writer) == 10_000)
        return store
    }

    @Test func aVerifiedCountOverThePartialLimitIsDroppedWithoutReadingTheFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let key = StoreKey(primary: "GET http://127.0.0.1/big")
        let store = try storeWithAPartial(dir, key)
        let file = try #require(try store.withIndex { (index: StoreIndex) throws(CacheStoreError) -> String? in
            try index.partial(for: key)?.file
        })
        // The claim: 100 GB verified, backed by a sparse file of that size (no blocks behind it).
        let claimed: Int64 = 100 << 30
        try store.withIndex { (index: StoreIndex) throws(CacheStoreError) in
            try index.db.execute("UPDATE partials SET verified = \(claimed)")
        }
        let path = store.directoryURL.appendingPathComponent("tmp").appendingPathComponent(file).path
        #expect(truncate(path, off_t(claimed)) == 0)

        #expect(try store.resumePartial(for: key) == nil)
        #expect(store.partial(for: key) == nil, "the edited partial is removed")
        #expect(!FileManager.default.fileExists(atPath: path), "and its file deleted, never read")
    }

    @Test func aPartialWithinTheLimitIsStillResumed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let key = StoreKey(primary: "GET http://127.0.0.1/small")
        let store = try storeWithAPartial(dir, key)
        let resumed = try #require(try store.resumePartial(for: key))
        #expect(resumed.bytesWritten == 10_000)
        resumed.abort()
    }
}
