import Foundation
import Testing
@testable import CacheStore

/// A store that only reads (the process answering one request from the cache) writes nothing but its access times
/// and hit/miss counts, and leaves the namespace's files as it found them: no session marker, and the `-wal` /
/// `-shm` files the last close keeps (the WAL truncated to 0 bytes) are the same files, neither deleted nor
/// created again.
@Suite struct AStoreThatOnlyReadsTests {
    /// Every path below the namespace directory, relative to it.
    static func fileSet(_ store: URL) -> Set<String> {
        let base = store.standardizedFileURL.path
        var result = Set<String>()
        if let walker = FileManager.default.enumerator(atPath: base) {
            while let path = walker.nextObject() as? String { result.insert(path) }
        }
        return result
    }

    /// The inode number and size of the file at `path` (not following a symbolic link), or nil when missing.
    static func identity(_ path: String) -> (inode: UInt64, size: Int64)? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let inode = (attributes[.systemFileNumber] as? NSNumber)?.uint64Value,
              let size = (attributes[.size] as? NSNumber)?.int64Value else { return nil }
        return (inode, size)
    }

    @Test func aHitLeavesTheFileSetAsItWasAndItsBookkeepingSurvivesTheClose() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        let key = StoreKey(primary: "GET http://example.test/a")
        let writer = try CacheStore(configuration: testConfiguration(dir, clock: clock))
        try writer.store(bytes(50_000), metadata: Data("m".utf8), for: key)
        try writer.store(bytes(10), metadata: Data(), for: StoreKey(primary: "GET http://example.test/inline"))
        #expect(BlobFiles.list(writer.files.sessionsPath).count == 1)  // a writing store has its marker
        writer.close()
        let before = Self.fileSet(writer.directoryURL)
        #expect(before.contains("index.sqlite-wal") && before.contains("index.sqlite-shm"))
        let walPath = writer.directoryURL.appendingPathComponent("index.sqlite-wal").path
        let shmPath = writer.directoryURL.appendingPathComponent("index.sqlite-shm").path
        let filesBefore = [Self.identity(walPath), Self.identity(shmPath)]
        #expect(Self.identity(walPath)?.size == 0)

        clock.advance(600)
        let reader = try CacheStore(configuration: testConfiguration(dir, clock: clock))
        #expect(reader.entry(for: key)?.body == bytes(50_000))
        #expect(BlobFiles.list(reader.files.sessionsPath).isEmpty)
        reader.close()
        #expect(Self.fileSet(reader.directoryURL) == before)
        // The same two files (same inode numbers), the WAL empty again after the closing checkpoint.
        #expect([Self.identity(walPath)?.inode, Self.identity(shmPath)?.inode] == filesBefore.map { $0?.inode })
        #expect(Self.identity(walPath)?.size == 0)

        let later = try CacheStore(configuration: testConfiguration(dir, clock: clock))
        defer { later.close() }
        #expect(later.statistics.diskHits == 1)
        #expect(later.info(for: key)?.lastAccessedAt == clock.now)
    }

    @Test func aMissIsCountedByAStoreThatOnlyReads() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let first = try CacheStore(configuration: testConfiguration(dir))
        first.close()
        let before = Self.fileSet(first.directoryURL)
        let reader = try CacheStore(configuration: testConfiguration(dir))
        #expect(reader.entry(for: StoreKey(primary: "absent")) == nil)
        reader.close()
        #expect(Self.fileSet(reader.directoryURL) == before)
        let later = try CacheStore(configuration: testConfiguration(dir))
        defer { later.close() }
        #expect(later.statistics.diskMisses == 1)
    }

    @Test func aStoreThatWroteAfterReadingSyncsAndKeepsItsMarkerUntilClosed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let key = StoreKey(primary: "k")
        let store = try CacheStore(configuration: testConfiguration(dir))
        #expect(store.entry(for: key) == nil)
        #expect(BlobFiles.list(store.files.sessionsPath).isEmpty)
        try store.store(bytes(30_000), metadata: Data(), for: key)
        #expect(BlobFiles.list(store.files.sessionsPath).count == 1)
        store.close()
        #expect(BlobFiles.list(store.files.sessionsPath).isEmpty)
        let later = try CacheStore(configuration: testConfiguration(dir))
        defer { later.close() }
        #expect(later.entry(for: key)?.body == bytes(30_000))
        #expect(later.statistics.diskMisses == 1)
    }
}
