import Foundation
import Testing
@testable import CacheStore

@Suite struct CacheStoreRoundTripTests {
    @Test(arguments: [0, 1, 100, 8 << 10, (8 << 10) + 1, 300_000])
    func roundTripOfEveryBodySize(size: Int) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let key = StoreKey(primary: "GET https://example.com/\(size)")
        let body = bytes(size)
        do {
            let store = try CacheStore(configuration: testConfiguration(dir))
            let info = try store.store(body, metadata: Data("meta".utf8), for: key)
            #expect(info.bodySize == Int64(size))
            #expect(store.entry(for: key)?.body == body)
            #expect((store.bodyFileURL(for: key) != nil) == (size > 8 << 10))
        }
        // Reopened: the disk tier alone must return the same bytes.
        let reopened = try CacheStore(configuration: testConfiguration(dir))
        let entry = try #require(reopened.entry(for: key))
        #expect(entry.body == body)
        #expect(entry.info.metadata == Data("meta".utf8))
        #expect(reopened.statistics.diskHits == 1)
        #expect(reopened.statistics.diskBytes == Int64(size))
        #expect(bytesOnDisk(reopened) == Int64(size))
    }
}

@Suite struct CacheStoreBasicsTests {
    @Test func variantsAreSeparateEntriesOfOnePrimaryKey() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let gzip = StoreKey(primary: "GET /a", variant: "accept-encoding=gzip")
        let plain = StoreKey(primary: "GET /a", variant: "accept-encoding=identity")
        try store.store(bytes(100, seed: 1), metadata: Data("g".utf8), for: gzip)
        try store.store(bytes(20_000, seed: 2), metadata: Data("p".utf8), for: plain)
        try store.store(bytes(10, seed: 3), metadata: Data(), for: StoreKey(primary: "GET /b"))
        #expect(store.variants(forPrimaryKey: "GET /a").map(\.key) == [gzip, plain])
        #expect(store.entry(for: gzip)?.body == bytes(100, seed: 1))
        #expect(store.entry(for: plain)?.body == bytes(20_000, seed: 2))
        try store.removeAll(forPrimaryKey: "GET /a")
        #expect(store.variants(forPrimaryKey: "GET /a").isEmpty)
        #expect(store.entry(for: plain) == nil)
        #expect(store.allEntries().map(\.key) == [StoreKey(primary: "GET /b")])
        #expect(store.statistics.entries == 1)
        #expect(store.statistics.diskBytes == 10)
        #expect(bytesOnDisk(store) == 10)
    }

    @Test func overwriteGetsANewBlobAndFreesTheOldOne() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let key = StoreKey(primary: "k")
        try store.store(bytes(50_000, seed: 1), metadata: Data(), for: key)
        let first = try #require(store.bodyFileURL(for: key))
        try store.store(bytes(60_000, seed: 2), metadata: Data(), for: key)
        let second = try #require(store.bodyFileURL(for: key))
        #expect(first != second)
        #expect(!FileManager.default.fileExists(atPath: first.path))
        #expect(store.entry(for: key)?.body == bytes(60_000, seed: 2))
        // Replaced by an inline body: the blob goes too.
        try store.store(bytes(10, seed: 3), metadata: Data(), for: key)
        #expect(store.bodyFileURL(for: key) == nil)
        #expect(!FileManager.default.fileExists(atPath: second.path))
        #expect(store.statistics.diskBytes == 10)
        #expect(store.statistics.entries == 1)
        #expect(bytesOnDisk(store) == 10)
    }

    @Test func metadataUpdateKeepsTheBody() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        let store = try CacheStore(configuration: testConfiguration(dir, clock: clock))
        let key = StoreKey(primary: "k")
        try store.store(bytes(30_000), metadata: Data("v1".utf8), for: key)
        let blob = store.bodyFileURL(for: key)
        _ = store.entry(for: key)  // now in memory: the update must reach the memory copy too
        clock.advance(10)
        try store.updateMetadata(Data("v2".utf8), for: key)
        #expect(store.entry(for: key)?.info.metadata == Data("v2".utf8))
        #expect(store.bodyFileURL(for: key) == blob)
        #expect(store.info(for: key)?.lastAccessedAt == clock.now)
        let reopened = try CacheStore(configuration: testConfiguration(dir, clock: clock))
        #expect(reopened.entry(for: key)?.info.metadata == Data("v2".utf8))
        #expect(reopened.entry(for: key)?.body == bytes(30_000))
        #expect(throws: CacheStoreError.self) { try store.updateMetadata(Data(), for: StoreKey(primary: "absent")) }
    }

    @Test func missesAndHitsAreCountedPerTier() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let key = StoreKey(primary: "k")
        #expect(store.entry(for: key) == nil)
        try store.store(bytes(100), metadata: Data(), for: key)
        #expect(store.entry(for: key) != nil)  // memory (write-through)
        let stats = store.statistics
        #expect(stats.memoryHits == 1)
        #expect(stats.memoryMisses == 1)
        #expect(stats.diskMisses == 1)
        #expect(stats.diskHits == 0)
        #expect(stats.memoryEntries == 1)
        #expect(stats.memoryBytes == 100)
    }

    @Test func infoAndAccessTimesFollowTheClock() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = TestClock()
        var config = testConfiguration(dir, clock: clock)
        config.maxMemoryBytes = 0
        let store = try CacheStore(configuration: config)
        let key = StoreKey(primary: "k")
        let stored = try store.store(bytes(10), metadata: Data("m".utf8), for: key, storageClass: .session, pinned: true)
        #expect(stored.createdAt == clock.now)
        clock.advance(60)
        let read = try #require(store.entry(for: key))
        #expect(read.info.lastAccessedAt == clock.now)
        #expect(read.info.createdAt == stored.createdAt)
        #expect(read.info.isPinned)
        #expect(read.info.storageClass == .session)
        #expect(store.info(for: key)?.metadata == Data("m".utf8))
    }

    @Test func removeAllEmptiesTheNamespace() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        for i in 0..<5 { try store.store(bytes(i * 10_000), metadata: Data(), for: StoreKey(primary: "\(i)"), pinned: i == 2) }
        try store.removeAll()
        #expect(store.allEntries().isEmpty)
        #expect(store.statistics.diskBytes == 0)
        #expect(bytesOnDisk(store) == 0)
        #expect(store.entry(for: StoreKey(primary: "2")) == nil)
    }
}

@Suite struct CacheStoreConcurrencyTests {
    @Test func manyThreadsReadingAndWritingKeepTheStoreConsistent() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var config = testConfiguration(dir)
        config.maxDiskBytes = 2_000_000
        config.maxMemoryBytes = 200_000
        let store = try CacheStore(configuration: config)
        let failures = LogSink()
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for step in 0..<150 {
                let n = (step * 7 + thread * 13) % 30
                let key = StoreKey(primary: "k\(n)")
                // The body of key n is always derived from n, so any read can be checked exactly.
                let body = bytes(n * 1_500, seed: UInt8(n))
                do {
                    switch step % 4 {
                    case 0: try store.store(body, metadata: Data("\(n)".utf8), for: key)
                    case 1: if let e = store.entry(for: key), e.body != body { failures.append("torn read of \(key)") }
                    case 2: if step % 12 == 2 { try store.remove(key) } else { _ = store.info(for: key) }
                    default:
                        let writer = try store.makeBodyWriter()
                        try writer.write(body)
                        try store.commit(writer, metadata: Data("\(n)".utf8), for: key)
                    }
                } catch {
                    failures.append("\(key): \(error)")
                }
            }
        }
        #expect(failures.lines.isEmpty, "\(failures.lines.prefix(3))")
        for n in 0..<30 {
            if let e = store.entry(for: StoreKey(primary: "k\(n)")) { #expect(e.body == bytes(n * 1_500, seed: UInt8(n))) }
        }
        #expect(store.statistics.diskBytes == bytesOnDisk(store))
        #expect(store.statistics.diskBytes <= 2_000_000)
        #expect(store.verify(repair: false).ok)
    }
}
