import Foundation
import Testing
@testable import CacheStore

/// A fault injected after each step of a write, then a reopen: every entry reads back exactly or is gone, the
/// old body survives until the index commit, and the accounting matches the files.
@Suite struct FaultInjectionTests {
    static let fileSteps = ["tmp-written", "tmp-synced", "blob-renamed", "index-committed", "old-blob-removed"]
    static let inlineSteps = ["index-committed", "old-blob-removed"]

    struct Case: Sendable, CustomStringConvertible {
        var step: String
        var newSize: Int
        var crash: Bool
        var description: String { "\(step) size=\(newSize) \(crash ? "crash" : "error")" }
    }

    static let cases: [Case] = {
        var all: [Case] = []
        for crash in [true, false] {
            for step in fileSteps { all.append(Case(step: step, newSize: 40_000, crash: crash)) }
            for step in inlineSteps { all.append(Case(step: step, newSize: 100, crash: crash)) }
        }
        return all
    }()

    @Test(arguments: cases)
    func aWriteInterruptedAtEveryStep(_ c: Case) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let key = StoreKey(primary: "victim")
        let bystander = StoreKey(primary: "bystander")
        let old = bytes(30_000, seed: 1)
        let new = bytes(c.newSize, seed: 2)
        do {
            let store = try CacheStore(configuration: testConfiguration(dir))
            try store.store(old, metadata: Data("old".utf8), for: key)
            try store.store(bytes(20_000, seed: 3), metadata: Data(), for: bystander)
        }
        let committed = Self.fileSteps.firstIndex(of: c.step)! >= 3
        do {
            var config = testConfiguration(dir)
            let step = c.step
            config.faultInjection = { (name: String) throws(CacheStoreError) in
                if name == step { throw CacheStoreError(.io, "injected fault at \(name)") }
            }
            config.faultSkipsCleanup = c.crash
            let store = try CacheStore(configuration: config)
            #expect(throws: CacheStoreError.self) { try store.store(new, metadata: Data("new".utf8), for: key) }
            // The failed writer's own view is consistent too.
            let seen = store.entry(for: key)?.body
            #expect(seen == (committed ? new : old))
        }
        let store = try CacheStore(configuration: testConfiguration(dir))
        let entry = try #require(store.entry(for: key))
        #expect(entry.body == (committed ? new : old))
        #expect(entry.info.metadata == Data(committed ? "new".utf8 : "old".utf8))
        #expect(store.entry(for: bystander)?.body == bytes(20_000, seed: 3))
        #expect(store.statistics.diskBytes == bytesOnDisk(store))
        #expect(store.statistics.entries == 2)
        #expect(BlobFiles.list(store.files.tmpPath).isEmpty)
        let report = store.verify(repair: false)
        #expect(report.ok, "\(report.problems)")
    }

    @Test(arguments: ["tmp-written", "tmp-synced", "blob-renamed"])
    func aStreamedCommitInterruptedLeavesTheOldEntry(step: String) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let key = StoreKey(primary: "k")
        var config = testConfiguration(dir)
        config.faultInjection = { (name: String) throws(CacheStoreError) in
            if name == step { throw CacheStoreError.posix(ENOSPC, "injected") }
        }
        let store = try CacheStore(configuration: config)
        let writer = try store.makeBodyWriter()
        try writer.write(bytes(100_000))
        let error = #expect(throws: CacheStoreError.self) { try store.commit(writer, metadata: Data(), for: key) }
        if step != "tmp-written" { #expect(error?.code == .diskFull) }
        #expect(store.info(for: key) == nil)
        #expect(BlobFiles.list(store.files.tmpPath).isEmpty)
        #expect(bytesOnDisk(store) == 0)
    }

    @Test func diskFullIsATypedErrorAndKeepsThePreviousEntry() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let key = StoreKey(primary: "k")
        do {
            let store = try CacheStore(configuration: testConfiguration(dir))
            try store.store(bytes(50_000, seed: 1), metadata: Data(), for: key)
        }
        var config = testConfiguration(dir)
        config.faultInjection = { (name: String) throws(CacheStoreError) in
            if name == "tmp-written" { throw CacheStoreError.posix(ENOSPC, "write") }
        }
        let store = try CacheStore(configuration: config)
        let error = #expect(throws: CacheStoreError.self) {
            try store.store(bytes(50_000, seed: 2), metadata: Data(), for: key)
        }
        #expect(error?.code == .diskFull)
        #expect(error?.description.contains("No space left") == true)
        #expect(store.entry(for: key)?.body == bytes(50_000, seed: 1))
        #expect(BlobFiles.list(store.files.tmpPath).isEmpty)
        #expect(store.statistics.diskBytes == bytesOnDisk(store))
    }

    @Test(arguments: [(ENOSPC, CacheStoreError.Code.diskFull), (EACCES, .permissionDenied), (EROFS, .permissionDenied),
                      (ENOENT, .notFound), (EIO, .io)])
    func errnoValuesMapToCodes(err: Int32, code: CacheStoreError.Code) {
        #expect(CacheStoreError.posix(err, "op").code == code)
    }

    @Test(.enabled(if: getuid() != 0, "root ignores file permissions"))
    func aReadOnlyDirectoryIsATypedError() throws {
        let dir = TemporaryDirectory()
        defer {
            chmod(dir.url.path, 0o700)
            dir.remove()
        }
        chmod(dir.url.path, 0o500)
        let error = #expect(throws: CacheStoreError.self) { try CacheStore(configuration: testConfiguration(dir)) }
        #expect(error?.code == .permissionDenied)
    }
}
