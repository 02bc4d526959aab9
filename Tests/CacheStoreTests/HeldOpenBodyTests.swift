import Foundation
import Testing
@testable import CacheStore

/// A reader that found an entry must be able to finish reading it while another process purges, evicts or
/// replaces it: `openVerifiedBody` hands out the verified blob held open, and an open file stays readable after
/// its name is unlinked.
@Suite struct HeldOpenBodyTests {
    func readAll(_ body: OpenedBody) throws -> Data {
        var data = Data()
        while true {
            let chunk = try body.read(from: Int64(data.count), upToCount: 1 << 20)
            if chunk.isEmpty { return data }
            data.append(chunk)
        }
    }

    @Test func aBodyFoundBeforeAPurgeIsReadInFull() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        defer { store.close() }
        let key = StoreKey(primary: "big")
        let body = bytes(300_000)  // any blob-sized body: the race is the same for 9 MiB
        try store.store(body, metadata: Data(), for: key)
        let opened = try #require(store.openVerifiedBody(for: key))
        // Another process purges everything (namespace removed, as `purge --all` does).
        let other = try CacheStore(configuration: testConfiguration(dir))
        try other.removeAll()
        other.close()
        try CacheStore.removeNamespace("default", in: dir.url)
        #expect(!FileManager.default.fileExists(atPath: opened.url.path))
        #expect(opened.size == Int64(body.count))
        #expect(try readAll(opened) == body)
        // Two readers sharing one value each get every byte (reads name their offset).
        #expect(try readAll(opened) == body)
    }

    @Test func aReplacementDoesNotChangeWhatAnEarlierReaderReads() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        defer { store.close() }
        let key = StoreKey(primary: "k")
        try store.store(bytes(200_000, seed: 1), metadata: Data(), for: key)
        let first = try #require(store.openVerifiedBody(for: key))
        try store.store(bytes(200_000, seed: 2), metadata: Data(), for: key)
        #expect(try readAll(first) == bytes(200_000, seed: 1))
        let second = try #require(store.openVerifiedBody(for: key))
        #expect(try readAll(second) == bytes(200_000, seed: 2))
        // An expectation that no longer matches is a miss.
        #expect(store.openVerifiedBody(for: key, matching: first.url == second.url ? nil : store.info(for: key)) != nil)
    }

    @Test func aDamagedBlobIsNeverHandedOut() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        defer { store.close() }
        let key = StoreKey(primary: "k")
        try store.store(bytes(200_000), metadata: Data(), for: key)
        let url = try #require(store.bodyFileURL(for: key))
        var damaged = bytes(200_000)
        damaged[10] ^= 0xFF
        try damaged.write(to: url)
        #expect(store.openVerifiedBody(for: key) == nil)
        #expect(store.info(for: key) == nil)
    }
}
