import Foundation
import Testing
@testable import CacheStore

/// The default durability (`.processCrash`: no fsync per body) keeps "no wrong byte is ever served": a body
/// the page cache never wrote out before an unclean shutdown (zeroed, torn, empty after the rename) fails its
/// size or crc32 check in the next process and is dropped, never served.
struct UncleanShutdownTests {
    /// What a power cut can leave of a blob file whose data was not synced.
    enum Loss: String, CaseIterable, Sendable { case zeroed, tornHalf, emptyAfterRename, garbage }

    /// Overwrites the file in place (same inode), as the disk holds it after the shutdown.
    func lose(_ url: URL, _ loss: Loss) throws {
        let original = try Data(contentsOf: url)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        switch loss {
        case .zeroed:
            try handle.write(contentsOf: Data(count: original.count))
        case .tornHalf:
            try handle.seek(toOffset: UInt64(original.count / 2))
            try handle.write(contentsOf: Data(count: original.count - original.count / 2))
        case .emptyAfterRename:
            try handle.truncate(atOffset: 0)
        case .garbage:
            try handle.write(contentsOf: bytes(original.count, seed: 99))
        }
    }

    @Test func processCrashIsTheDefault() {
        #expect(CacheStore.Configuration(directory: URL(fileURLWithPath: "/tmp")).durability == .processCrash)
    }

    @Test(arguments: Loss.allCases)
    func aBodyLostInAnUncleanShutdownIsNeverServed(loss: Loss) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var config = testConfiguration(dir)
        config.maxMemoryBytes = 0
        // The writing process: stores bodies both ways, then "dies" without closing the store.
        let writer = try CacheStore(configuration: config)
        let stored = StoreKey(primary: "stored"), streamed = StoreKey(primary: "streamed"), intact = StoreKey(primary: "intact")
        try writer.store(bytes(40_000, seed: 1), metadata: Data("m".utf8), for: stored)
        let bodyWriter = try writer.makeBodyWriter()
        try bodyWriter.write(bytes(50_000, seed: 2))
        try writer.commit(bodyWriter, metadata: Data("m".utf8), for: streamed)
        try writer.store(bytes(30_000, seed: 3), metadata: Data("m".utf8), for: intact)
        let storedFile = try #require(writer.bodyFileURL(for: stored))
        let streamedFile = try #require(writer.bodyFileURL(for: streamed))
        try lose(storedFile, loss)
        try lose(streamedFile, loss)

        // The next process after the reboot.
        let reader = try CacheStore(configuration: config)
        #expect(reader.entry(for: stored) == nil)
        #expect(reader.verifiedBodyFileURL(for: streamed) == nil)
        #expect(reader.entry(for: intact)?.body == bytes(30_000, seed: 3))
        // Dropped, so no later read can serve them either.
        #expect(reader.info(for: stored) == nil)
        #expect(reader.info(for: streamed) == nil)
        #expect(reader.entry(for: streamed) == nil)
        reader.close()
        writer.close()
    }

    @Test func powerLossDurabilityStoresAndServes() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var config = testConfiguration(dir)
        config.durability = .powerLoss
        let store = try CacheStore(configuration: config)
        let key = StoreKey(primary: "k")
        try store.store(bytes(40_000), metadata: Data(), for: key)
        let bodyWriter = try store.makeBodyWriter()
        try bodyWriter.write(bytes(20_000, seed: 5))
        try store.commit(bodyWriter, metadata: Data(), for: StoreKey(primary: "w"))
        #expect(store.entry(for: key)?.body == bytes(40_000))
        #expect(store.entry(for: StoreKey(primary: "w"))?.body == bytes(20_000, seed: 5))
        store.close()
    }
}
