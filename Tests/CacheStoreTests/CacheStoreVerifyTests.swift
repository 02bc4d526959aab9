import Foundation
import Testing
@testable import CacheStore

@Suite struct CacheStoreVerifyTests {
    enum Damage: String, CaseIterable, Sendable { case flip, truncate, extend, delete }

    func damage(_ url: URL, _ kind: Damage) throws {
        var data = try Data(contentsOf: url)
        switch kind {
        case .flip: data[data.count / 2] ^= 0x01
        case .truncate: data = data.prefix(data.count - 1)
        case .extend: data.append(0)
        case .delete:
            try FileManager.default.removeItem(at: url)
            return
        }
        try data.write(to: url)
    }

    /// A store without a memory tier holding one 40,000-byte file-backed entry "k", and that entry's blob file.
    func storeWithOneBlob(_ dir: TemporaryDirectory, log: LogSink = LogSink()) throws -> (CacheStore, StoreKey, URL) {
        var config = testConfiguration(dir, log: log)
        config.maxMemoryBytes = 0
        let store = try CacheStore(configuration: config)
        let key = StoreKey(primary: "k")
        try store.store(bytes(40_000), metadata: Data(), for: key)
        return (store, key, try #require(store.bodyFileURL(for: key)))
    }

    @Test(arguments: Damage.allCases)
    func aDamagedBodyFileIsAMissAndTheEntryIsRemoved(kind: Damage) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let log = LogSink()
        let (store, key, url) = try storeWithOneBlob(dir, log: log)
        try damage(url, kind)
        #expect(store.entry(for: key) == nil)
        #expect(store.info(for: key) == nil)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(store.statistics.diskMisses == 1)
        #expect(store.statistics.diskBytes == 0)
        #expect(log.lines.contains { $0.contains("dropping unreadable entry") })
    }

    @Test(arguments: [Damage.flip, .truncate])
    func aDamagedBodyFileIsNotHandedOutByPath(kind: Damage) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let log = LogSink()
        let (store, key, url) = try storeWithOneBlob(dir, log: log)
        #expect(store.verifiedBodyFileURL(for: key) == url)  // verified once: remembered by file identity
        #expect(store.verifiedBodyFileURL(for: key, matching: store.info(for: key)) == url)
        try damage(url, kind)
        #expect(store.verifiedBodyFileURL(for: key) == nil)
        #expect(store.info(for: key) == nil)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(store.statistics.diskHits == 2 && store.statistics.diskMisses == 1)
        #expect(store.statistics.diskBytes == 0)
        #expect(log.lines.contains { $0.contains("dropping unreadable entry") })
    }

    @Test func aReplacedEntryIsAMissNotDamage() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (store, key, _) = try storeWithOneBlob(dir)
        let old = try #require(store.info(for: key))
        try store.store(bytes(40_000, seed: 7), metadata: Data(), for: key)
        #expect(store.verifiedBodyFileURL(for: key, matching: old) == nil)
        #expect(store.verifiedBodyFileURL(for: key) != nil, "the new entry is kept")
        #expect(store.verifiedBodyFileURL(for: StoreKey(primary: "absent")) == nil)
        #expect(store.statistics.diskHits == 1 && store.statistics.diskMisses == 2)
    }

    @Test func aDamagedInlineBodyIsAMiss() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var config = testConfiguration(dir)
        config.maxMemoryBytes = 0
        let store = try CacheStore(configuration: config)
        let key = StoreKey(primary: "k")
        try store.store(bytes(100), metadata: Data(), for: key)
        try store.withIndex { (index: StoreIndex) throws(CacheStoreError) in
            try index.db.execute("UPDATE entries SET inline_body = zeroblob(100)")
        }
        #expect(store.entry(for: key) == nil)
        #expect(store.allEntries().isEmpty)
    }

    @Test func verifyReportsAndRepairsEveryKindOfProblem() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        for i in 0..<6 { try store.store(bytes(20_000, seed: UInt8(i)), metadata: Data(), for: StoreKey(primary: "\(i)")) }
        try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "inline"))
        try damage(try #require(store.bodyFileURL(for: StoreKey(primary: "1"))), .flip)
        try damage(try #require(store.bodyFileURL(for: StoreKey(primary: "2"))), .truncate)
        try damage(try #require(store.bodyFileURL(for: StoreKey(primary: "3"))), .delete)
        let orphan = store.directoryURL.appendingPathComponent("blobs/00000000000000000000000000000000")
        try bytes(10).write(to: orphan)
        // Backdate the orphan: repair spares orphans younger than a minute (a concurrent commit's blob).
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: orphan.path)

        let report = store.verify(repair: false)
        #expect(report.checked == 7)
        #expect(!report.ok)
        let kinds = Dictionary(grouping: report.problems, by: \.kind).mapValues(\.count)
        #expect(kinds == ["checksum": 1, "size": 1, "missing-body": 1, "orphan-body": 1])
        #expect(report.problems.first { $0.kind == "checksum" }?.key == StoreKey(primary: "1"))
        #expect(report.repaired == 0)

        let repaired = store.verify(repair: true)
        #expect(repaired.repaired == 4)
        #expect(!FileManager.default.fileExists(atPath: orphan.path))
        let after = store.verify(repair: false)
        #expect(after.ok, "\(after.problems)")
        #expect(after.checked == 4)
        #expect(store.statistics.diskBytes == bytesOnDisk(store))
    }

    /// An orphan younger than 60 s is not left alone with "repaired 0" and no reason. With no other store
    /// open it cannot belong to anyone's uncommitted write, so repair removes it.
    @Test func aYoungOrphanIsRemovedWhenNoOtherStoreHasTheNamespaceOpen() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        try store.store(bytes(20_000), metadata: Data(), for: StoreKey(primary: "a"))
        let orphan = store.directoryURL.appendingPathComponent("blobs/0123456789abcdef0123456789abcdef")
        try bytes(10).write(to: orphan)
        let report = store.verify(repair: true)
        #expect(report.problems.map(\.kind) == ["orphan-body"])
        #expect(report.repaired == 1)
        #expect(report.unresolved == 0)
        #expect(!FileManager.default.fileExists(atPath: orphan.path))
        #expect(store.verify(repair: false).ok)
    }

    @Test func aYoungOrphanIsKeptWithAReasonWhileAnotherStoreIsOpen() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let orphan = store.directoryURL.appendingPathComponent("blobs/0123456789abcdef0123456789abcdef")
        try bytes(10).write(to: orphan)
        let other = try CacheStore(configuration: testConfiguration(dir))  // another process, as far as the files go
        // A store that has written (so its marker is in sessions/) may be committing a body right now.
        try other.store(bytes(5), metadata: Data(), for: StoreKey(primary: "other"))
        let report = store.verify(repair: true)
        #expect(report.problems.count == 1)
        let problem = try #require(report.problems.first)
        #expect(problem.kind == "orphan-body")
        #expect(problem.isKept)
        #expect(problem.detail.contains("kept"))
        #expect(problem.detail.contains("another store has the namespace open"))
        #expect(report.repaired == 0)
        #expect(report.kept == 1)
        #expect(report.unresolved == 0)  // not a failed repair
        #expect(FileManager.default.fileExists(atPath: orphan.path))
        other.close()
        let later = store.verify(repair: true)
        #expect(later.repaired == 1 && later.unresolved == 0)
        #expect(!FileManager.default.fileExists(atPath: orphan.path))
    }

    /// A directory in blobs/ is removed when counted as repaired (else verify would fail forever).
    @Test func aDirectoryInTheBlobDirectoryIsRemoved() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        try store.store(bytes(20_000), metadata: Data(), for: StoreKey(primary: "a"))
        let stray = store.directoryURL.appendingPathComponent("blobs/stray")
        try FileManager.default.createDirectory(at: stray.appendingPathComponent("inner"), withIntermediateDirectories: true)
        try bytes(10).write(to: stray.appendingPathComponent("inner/file"))
        let found = store.verify(repair: false)
        #expect(found.problems.map(\.kind) == ["orphan-body"])
        #expect(found.problems.first?.detail.contains("directory") == true)
        let repaired = store.verify(repair: true)
        #expect(repaired.repaired == 1 && repaired.unresolved == 0)
        #expect(!FileManager.default.fileExists(atPath: stray.path))
        let after = store.verify(repair: false)
        #expect(after.ok, "\(after.problems)")
        #expect(store.entry(for: StoreKey(primary: "a"))?.body == bytes(20_000))
    }

    /// A body this store renamed into blobs/ but has not committed yet is not an orphan, even for a repair that
    /// may remove young orphans.
    @Test func aRepairNeverRemovesThisStoresUncommittedBody() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        final class Box: @unchecked Sendable {
            var store: CacheStore?
            var report: VerificationReport?
        }
        let box = Box()
        var config = testConfiguration(dir)
        config.faultInjection = { (step: String) throws(CacheStoreError) in
            if step == "blob-renamed", box.report == nil { box.report = box.store?.verify(repair: true) }
        }
        let store = try CacheStore(configuration: config)
        box.store = store
        try store.store(bytes(30_000), metadata: Data(), for: StoreKey(primary: "k"))
        let report = try #require(box.report)
        #expect(report.ok, "\(report.problems)")
        #expect(store.entry(for: StoreKey(primary: "k"))?.body == bytes(30_000))
        #expect(store.verify(repair: false).ok)
        box.store = nil
    }

    @Test func verifyFindsDriftedTotals() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "a"))
        try store.withIndex { (index: StoreIndex) throws(CacheStoreError) in
            try index.db.execute("UPDATE totals SET bytes = 12345")
        }
        #expect(store.verify(repair: false).problems.map(\.kind) == ["accounting"])
        #expect(store.verify(repair: true).repaired == 1)
        #expect(store.statistics.diskBytes == 10)
    }
}

@Suite struct ChecksumCacheTests {
    @Test func aBlobChangedAfterItWasVerifiedIsCaughtOnTheNextRead() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var config = testConfiguration(dir)
        config.maxMemoryBytes = 0
        let store = try CacheStore(configuration: config)
        let a = StoreKey(primary: "a")
        let b = StoreKey(primary: "b")
        try store.store(bytes(40_000, seed: 1), metadata: Data(), for: a)
        try store.store(bytes(40_000, seed: 2), metadata: Data(), for: b)
        #expect(store.entry(for: a) != nil)  // verified once
        #expect(store.entry(for: b) != nil)
        // Flip a byte and move the mtime, as any later rewrite does.
        let url = try #require(store.bodyFileURL(for: a))
        var data = try Data(contentsOf: url)
        data[123] ^= 0xFF
        try data.write(to: url)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 10)], ofItemAtPath: url.path)
        #expect(store.entry(for: a) == nil)
        // Truncation changes the size: caught without a checksum.
        let other = try #require(store.bodyFileURL(for: b))
        let handle = try FileHandle(forWritingTo: other)
        try handle.truncate(atOffset: 1_000)
        try handle.close()
        #expect(store.entry(for: b) == nil)
        #expect(store.allEntries().isEmpty)
    }

    @Test func aNewProcessVerifiesAgain() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var config = testConfiguration(dir)
        config.maxMemoryBytes = 0
        let key = StoreKey(primary: "a")
        let url: URL
        do {
            let store = try CacheStore(configuration: config)
            try store.store(bytes(40_000), metadata: Data(), for: key)
            #expect(store.entry(for: key) != nil)
            url = try #require(store.bodyFileURL(for: key))
        }
        let handle = try FileHandle(forUpdating: url)
        try handle.seek(toOffset: 5)
        try handle.write(contentsOf: Data([0xAB]))
        try handle.close()
        let reopened = try CacheStore(configuration: config)
        #expect(reopened.entry(for: key) == nil)
    }
}
