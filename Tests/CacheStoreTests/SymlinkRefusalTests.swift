import Foundation
import Testing
@testable import CacheStore

/// A local attacker with write access to the cache directory swaps the store's files and directories for symbolic
/// links (and FIFOs, hard links) to make the store delete, truncate, write or map something outside it. Nothing
/// the store deletes, truncates, writes, reads or maps may be reached through a symbolic link: a namespace whose
/// directories are links is refused (`.unsafeFile`), files are opened with `O_NOFOLLOW` relative to directory
/// descriptors, and a link is deleted itself, never its target.
@Suite struct SymlinkRefusalTests {
    /// A directory outside the cache holding files an attacker wants deleted; `intact` checks they survived.
    struct Victim {
        let dir: TemporaryDirectory
        init() throws {
            dir = TemporaryDirectory("victim")
            try Data("precious".utf8).write(to: dir.url.appendingPathComponent("keep.txt"))
            try FileManager.default.createDirectory(at: dir.url.appendingPathComponent("tree/sub"),
                                                    withIntermediateDirectories: true)
            try Data("deep".utf8).write(to: dir.url.appendingPathComponent("tree/sub/deep.txt"))
        }
        var intact: Bool {
            (try? Data(contentsOf: dir.url.appendingPathComponent("keep.txt"))) == Data("precious".utf8)
                && (try? Data(contentsOf: dir.url.appendingPathComponent("tree/sub/deep.txt"))) == Data("deep".utf8)
        }
        var fileURL: URL { dir.url.appendingPathComponent("keep.txt") }
    }

    /// Writes one blob entry and one inline entry, closes the store, and returns the namespace directory.
    func populate(_ dir: TemporaryDirectory) throws -> URL {
        let store = try CacheStore(configuration: testConfiguration(dir))
        try store.store(bytes(50_000), metadata: Data("m".utf8), for: StoreKey(primary: "blob"))
        try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "inline"))
        store.close()
        return dir.url.appendingPathComponent("default")
    }

    func replaceWithLink(_ url: URL, to target: URL) throws {
        try FileManager.default.removeItem(at: url)
        try FileManager.default.createSymbolicLink(at: url, withDestinationURL: target)
    }

    @Test(arguments: ["tmp", "sessions", "blobs"])
    func aSubdirectorySwappedForALinkIsRefusedAndItsTargetUntouched(name: String) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let victim = try Victim()
        defer { victim.dir.remove() }
        let namespace = try populate(dir)
        // A dead session marker makes the next opener run the full recovery (orphan sweep of blobs/).
        try Data().write(to: namespace.appendingPathComponent("sessions/12345-dead"))
        try replaceWithLink(namespace.appendingPathComponent(name), to: victim.dir.url)
        do {
            _ = try CacheStore(configuration: testConfiguration(dir))
            Issue.record("opened a namespace whose \(name) is a symbolic link")
        } catch {
            #expect(error.code == .unsafeFile, "\(error)")
            #expect(error.detail.contains("symbolic link"), "\(error)")
        }
        #expect(victim.intact)
        // A read-only open refuses it too, and changes nothing.
        var readOnly = testConfiguration(dir)
        readOnly.readOnly = true
        #expect(throws: CacheStoreError.self) { try CacheStore(configuration: readOnly) }
        #expect(victim.intact)
    }

    @Test func aNamespaceDirectoryThatIsALinkIsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let elsewhere = TemporaryDirectory("elsewhere")
        defer { elsewhere.remove() }
        _ = try populate(elsewhere)
        try FileManager.default.createSymbolicLink(at: dir.url.appendingPathComponent("default"),
                                                   withDestinationURL: elsewhere.url.appendingPathComponent("default"))
        do {
            _ = try CacheStore(configuration: testConfiguration(dir))
            Issue.record("a namespace that is a symbolic link opened")
        } catch {
            #expect(error.code == .unsafeFile)
        }
    }

    @Test(arguments: ["index.sqlite", "lock"])
    func anIndexOrLockFileThatIsALinkIsRefusedAndItsTargetUnchanged(name: String) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let victim = try Victim()
        defer { victim.dir.remove() }
        let namespace = try populate(dir)
        try replaceWithLink(namespace.appendingPathComponent(name), to: victim.fileURL)
        do {
            let store = try CacheStore(configuration: testConfiguration(dir))
            try store.store(bytes(100), metadata: Data(), for: StoreKey(primary: "x"))
            Issue.record("opened a namespace whose \(name) is a symbolic link")
        } catch {
            #expect(error.code == .unsafeFile, "\(error)")
        }
        #expect(victim.intact)
    }

    @Test func aGenerationFileThatIsALinkIsNeverWrittenThrough() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let victim = try Victim()
        defer { victim.dir.remove() }
        let namespace = try populate(dir)
        try replaceWithLink(namespace.appendingPathComponent("generation"), to: victim.fileURL)
        let log = LogSink()
        let store = try CacheStore(configuration: testConfiguration(dir, log: log))
        defer { store.close() }
        for i in 0..<5 { try store.store(bytes(100, seed: UInt8(i)), metadata: Data(), for: StoreKey(primary: "\(i)")) }
        #expect(store.entry(for: StoreKey(primary: "blob"))?.body == bytes(50_000))
        #expect(victim.intact, "the generation counter incremented the link's target")
        #expect(!store.generation.isShared)
        #expect(log.lines.contains { $0.contains("cannot map") })
    }

    @Test func aBlobSwappedForALinkIsAMissAndOnlyTheLinkIsDeleted() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let victim = try Victim()
        defer { victim.dir.remove() }
        let namespace = try populate(dir)
        let blobs = namespace.appendingPathComponent("blobs")
        let blob = try #require(try FileManager.default.contentsOfDirectory(atPath: blobs.path).first)
        // Same size as the body, so only the refusal to follow the link stops the read.
        let secret = victim.dir.url.appendingPathComponent("secret")
        try bytes(50_000, seed: 9).write(to: secret)
        try replaceWithLink(blobs.appendingPathComponent(blob), to: secret)
        let store = try CacheStore(configuration: testConfiguration(dir))
        defer { store.close() }
        #expect(store.entry(for: StoreKey(primary: "blob")) == nil)
        #expect(store.verifiedBodyFileURL(for: StoreKey(primary: "blob")) == nil)
        #expect((try? Data(contentsOf: secret)) == bytes(50_000, seed: 9))
        #expect(victim.intact)
        #expect(!FileManager.default.fileExists(atPath: blobs.appendingPathComponent(blob).path))
    }

    @Test func aFIFOInPlaceOfABlobOrTheGenerationNeverBlocks() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let namespace = try populate(dir)
        let blobs = namespace.appendingPathComponent("blobs")
        let blob = try #require(try FileManager.default.contentsOfDirectory(atPath: blobs.path).first)
        try FileManager.default.removeItem(at: blobs.appendingPathComponent(blob))
        #expect(mkfifo(blobs.appendingPathComponent(blob).path, 0o600) == 0)
        try FileManager.default.removeItem(at: namespace.appendingPathComponent("generation"))
        #expect(mkfifo(namespace.appendingPathComponent("generation").path, 0o600) == 0)
        let store = try CacheStore(configuration: testConfiguration(dir))
        defer { store.close() }
        #expect(store.entry(for: StoreKey(primary: "blob")) == nil)
        #expect(store.entry(for: StoreKey(primary: "inline"))?.body == bytes(10))
        #expect(store.verify(repair: true).checked >= 1)
    }

    @Test func aBodyWriterFileSwappedForALinkIsNotCommitted() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let victim = try Victim()
        defer { victim.dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir))
        defer { store.close() }
        for size in [100, 100_000] {
            let secret = victim.dir.url.appendingPathComponent("secret-\(size)")
            try bytes(size, seed: 7).write(to: secret)
            let writer = try store.makeBodyWriter()
            try writer.write(bytes(size))
            try replaceWithLink(writer.fileURL, to: secret)
            #expect(throws: CacheStoreError.self) {
                try store.commit(writer, metadata: Data(), for: StoreKey(primary: "w\(size)"))
            }
            #expect(store.entry(for: StoreKey(primary: "w\(size)")) == nil)
            #expect((try? Data(contentsOf: secret)) == bytes(size, seed: 7))
        }
        #expect(victim.intact)
    }

    @Test func orphanLinksAndHardLinksInBlobsAreRemovedWithoutTouchingTheirTargets() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let victim = try Victim()
        defer { victim.dir.remove() }
        let namespace = try populate(dir)
        let blobs = namespace.appendingPathComponent("blobs")
        try FileManager.default.createSymbolicLink(at: blobs.appendingPathComponent(BlobFiles.newID()),
                                                   withDestinationURL: victim.dir.url)
        try FileManager.default.createSymbolicLink(at: blobs.appendingPathComponent(BlobFiles.newID()),
                                                   withDestinationURL: victim.fileURL)
        #expect(link(victim.fileURL.path, blobs.appendingPathComponent(BlobFiles.newID()).path) == 0)
        // A directory tree holding a link to the victim: the tree goes, the victim stays.
        let tree = blobs.appendingPathComponent(BlobFiles.newID())
        try FileManager.default.createDirectory(at: tree, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: tree.appendingPathComponent("inside"), withDestinationURL: victim.dir.url)
        try Data().write(to: namespace.appendingPathComponent("sessions/1-dead"))  // unclean: recovery sweeps orphans
        let store = try CacheStore(configuration: testConfiguration(dir))
        _ = store.verify(repair: true)
        store.close()
        #expect(victim.intact)
        #expect(try FileManager.default.contentsOfDirectory(atPath: blobs.path).count == 1)
    }

    @Test func removingANamespaceNeverDescendsIntoALink() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let victim = try Victim()
        defer { victim.dir.remove() }
        let namespace = try populate(dir)
        try FileManager.default.createSymbolicLink(at: namespace.appendingPathComponent("blobs/evil"),
                                                   withDestinationURL: victim.dir.url)
        try CacheStore.removeNamespace("default", in: dir.url)
        #expect(!FileManager.default.fileExists(atPath: namespace.path))
        #expect(victim.intact)
    }
}
