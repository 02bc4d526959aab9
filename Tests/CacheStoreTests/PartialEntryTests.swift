import Foundation
import Testing
@testable import CacheStore

/// Writes `data` through the writer's descriptor, as a transport does (the writer does not see the bytes).
private func writeThroughDescriptor(_ writer: BodyWriter, _ data: Data) {
    data.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let n = Foundation.write(writer.fileDescriptor, raw.baseAddress! + offset, raw.count - offset)
            if n <= 0 { return }
            offset += n
        }
    }
}

private func temporaryNames(_ store: CacheStore) -> [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: store.directoryURL.appendingPathComponent("tmp").path)) ?? []
}

@Suite struct PartialEntryTests {
    @Test func anInterruptedBodyIsKeptAndResumedIntoACompleteEntry() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let key = StoreKey(primary: "GET https://example.com/big")
        let body = bytes(300_000, seed: 4)
        let writer = try store.makeBodyWriter()
        try store.beginPartial(writer, metadata: Data("head".utf8), for: key)
        #expect(store.partial(for: key)?.isInProgress == true)
        writeThroughDescriptor(writer, body.prefix(100_000))
        #expect(try store.checkpointPartial(writer) == 100_000)
        writeThroughDescriptor(writer, body[100_000..<180_000])
        #expect(store.keepPartial(writer) == 180_000)
        let kept = try #require(store.partial(for: key))
        #expect(kept.verifiedBytes == 180_000)
        #expect(!kept.isInProgress)
        #expect(kept.metadata == Data("head".utf8))
        #expect(store.entry(for: key) == nil)  // a partial is never a stored response

        let resumed = try #require(try store.resumePartial(for: key))
        #expect(resumed.bytesWritten == 180_000)
        #expect(try store.resumePartial(for: key) == nil)  // claimed by the first resume
        writeThroughDescriptor(resumed, body[180_000...])
        try store.commit(resumed, metadata: Data("complete".utf8), for: key)
        #expect(store.entry(for: key)?.body == body)
        #expect(store.partial(for: key) == nil)
        #expect(temporaryNames(store).isEmpty)
        #expect(store.verify(repair: false).problems.isEmpty)
    }

    @Test func recoveryCutsAPartialToItsVerifiedPrefixAndEmptiesTheRestOfTmp() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let key = StoreKey(primary: "GET https://example.com/killed")
        let body = bytes(200_000, seed: 7)
        do {
            // A process that dies mid-transfer: checkpoints were recorded, the bytes after the last are unverified.
            let store = try CacheStore(configuration: testConfiguration(dir))
            let writer = try store.makeBodyWriter()
            try store.beginPartial(writer, metadata: Data("head".utf8), for: key)
            writeThroughDescriptor(writer, body.prefix(120_000))
            try store.checkpointPartial(writer)
            writeThroughDescriptor(writer, Data(repeating: 0xEE, count: 50_000))  // never checksummed
            writer.detach()
            let debris = try store.makeBodyWriter()
            try debris.write(Data("debris".utf8))
            debris.detach()
            #expect(temporaryNames(store).count == 2)
        }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let kept = try #require(store.partial(for: key))
        #expect(kept.verifiedBytes == 120_000)
        #expect(!kept.isInProgress)  // its owner is gone
        #expect(temporaryNames(store).count == 1)
        let resumed = try #require(try store.resumePartial(for: key))
        writeThroughDescriptor(resumed, body[120_000...])
        try store.commit(resumed, metadata: Data(), for: key)
        #expect(store.entry(for: key)?.body == body)
    }

    @Test func aPartialWhosePrefixChangedOnDiskIsRemovedNotResumed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let key = StoreKey(primary: "GET https://example.com/flipped")
        let writer = try store.makeBodyWriter()
        try store.beginPartial(writer, metadata: Data(), for: key)
        writeThroughDescriptor(writer, bytes(50_000, seed: 2))
        let file = writer.fileURL
        #expect(store.keepPartial(writer) == 50_000)
        let handle = try FileHandle(forWritingTo: file)
        try handle.seek(toOffset: 10)
        handle.write(Data([0x01, 0x02, 0x03]))
        try handle.close()
        #expect(try store.resumePartial(for: key) == nil)
        #expect(store.partial(for: key) == nil)
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test func aLiveTransfersPartialIsNotClaimedByAnotherStore() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let first = try CacheStore(configuration: testConfiguration(dir))
        let second = try CacheStore(configuration: testConfiguration(dir))
        let key = StoreKey(primary: "GET https://example.com/busy")
        let writer = try first.makeBodyWriter()
        try first.beginPartial(writer, metadata: Data(), for: key)
        writeThroughDescriptor(writer, bytes(40_000))
        try first.checkpointPartial(writer)
        #expect(try second.resumePartial(for: key) == nil)
        #expect(first.keepPartial(writer) == 40_000)
        #expect(try second.resumePartial(for: key)?.bytesWritten == 40_000)
    }

    @Test func partialsAreEvictedBeforeCompleteEntriesAndNeverEvictOne() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var configuration = testConfiguration(dir)
        configuration.maxDiskBytes = 250_000
        let store = try CacheStore(configuration: configuration)
        try store.store(bytes(100_000, seed: 1), metadata: Data(), for: StoreKey(primary: "complete"))
        let old = StoreKey(primary: "GET https://example.com/old"), new = StoreKey(primary: "GET https://example.com/new")
        let first = try store.makeBodyWriter()
        try store.beginPartial(first, metadata: Data(), for: old)
        writeThroughDescriptor(first, bytes(100_000, seed: 2))
        #expect(store.keepPartial(first) == 100_000)
        let second = try store.makeBodyWriter()
        try store.beginPartial(second, metadata: Data(), for: new)
        writeThroughDescriptor(second, bytes(100_000, seed: 3))
        // 300,000 bytes > 250,000: the idle partial goes, the growing one and the complete entry stay.
        #expect(try store.checkpointPartial(second) == 100_000)
        #expect(store.partial(for: old) == nil)
        writeThroughDescriptor(second, bytes(100_000, seed: 4))
        // Now the growing partial alone would need a complete entry's room: it is no longer kept.
        #expect(try store.checkpointPartial(second) == nil)
        #expect(store.partial(for: new) == nil)
        #expect(store.entry(for: StoreKey(primary: "complete")) != nil)
        second.abort()
        #expect(temporaryNames(store).isEmpty)
    }

    @Test func aPartialOverTheDiskLimitIsNotKept() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var configuration = testConfiguration(dir)
        configuration.maxDiskBytes = 50_000
        let store = try CacheStore(configuration: configuration)
        let key = StoreKey(primary: "GET https://example.com/huge")
        let writer = try store.makeBodyWriter()
        try store.beginPartial(writer, metadata: Data(), for: key)
        writeThroughDescriptor(writer, bytes(60_000))
        #expect(store.keepPartial(writer) == nil)
        #expect(store.partial(for: key) == nil)
        #expect(temporaryNames(store).isEmpty)
    }

    /// The per-entry limit bounds stored responses; a partial of a body over it (which is delivered without
    /// being stored) is kept within the disk limit, so its interrupted download can go on where it stopped.
    @Test func aPartialOverTheEntryLimitWithinTheDiskLimitIsKept() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var configuration = testConfiguration(dir)
        configuration.maxDiskBytes = 1 << 20
        configuration.maxEntryBytes = 50_000
        let store = try CacheStore(configuration: configuration)
        let key = StoreKey(primary: "GET https://example.com/big")
        let writer = try store.makeBodyWriter()
        try store.beginPartial(writer, metadata: Data(), for: key)
        writeThroughDescriptor(writer, bytes(60_000))
        #expect(store.keepPartial(writer) == 60_000)
        #expect(store.partial(for: key)?.verifiedBytes == 60_000)
    }

    @Test func purgingAURLRemovesItsPartialAndItsFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let key = StoreKey(primary: "GET https://example.com/purged")
        let writer = try store.makeBodyWriter()
        try store.beginPartial(writer, metadata: Data(), for: key)
        writeThroughDescriptor(writer, bytes(30_000))
        #expect(store.keepPartial(writer) == 30_000)
        #expect(store.allPartials().count == 1)
        try store.removeAll(forPrimaryKey: key.primary)
        #expect(store.allPartials().isEmpty)
        #expect(temporaryNames(store).isEmpty)
    }

    @Test func anIndexOfSchemaVersion1IsMigratedKeepingItsEntries() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try CacheStore(configuration: testConfiguration(dir))
            try store.store(bytes(20_000), metadata: Data("m".utf8), for: StoreKey(primary: "old"))
            try store.withIndex { (index: StoreIndex) throws(CacheStoreError) in
                try index.db.execute("DROP TABLE partials; UPDATE meta SET value = '1' WHERE name = 'schema_version'")
            }
        }
        do {
            var readOnly = testConfiguration(dir)
            readOnly.readOnly = true
            let store = try CacheStore(configuration: readOnly)
            #expect(store.entry(for: StoreKey(primary: "old"))?.body == bytes(20_000))
            #expect(store.allPartials().isEmpty)
        }
        let log = LogSink()
        let store = try CacheStore(configuration: testConfiguration(dir, log: log))
        #expect(log.lines.contains { $0.contains("migrated from schema version 1 to 2") })
        #expect(store.entry(for: StoreKey(primary: "old"))?.body == bytes(20_000))
        let version = try store.withIndex { (index: StoreIndex) throws(CacheStoreError) -> Int? in try index.recordedSchemaVersion() }
        #expect(version == 2)
        let writer = try store.makeBodyWriter()
        try store.beginPartial(writer, metadata: Data(), for: StoreKey(primary: "new"))
        writeThroughDescriptor(writer, bytes(10_000))
        #expect(store.keepPartial(writer) == 10_000)
    }
}
