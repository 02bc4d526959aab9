import CacheTestSupport
import Foundation
import Testing
@testable import CacheStore

/// A cache directory that cannot be used normally — a full disk, a deleted WAL, modes set to 000 — must degrade,
/// never fail: what is stored is still served when it can be read, and `CacheStore.unavailable` is the store a
/// client works with when nothing can be opened (every read misses, every write is refused, no file is touched).
@Suite(.serialized) struct UnusableCacheTests {
    /// Stores 100 000-byte bodies under keys "0", "1", … until a store fails (the disk is full) or 100 are
    /// stored, then closes the store; returns the indices stored.
    private func storeUntilTheDiskIsFull(_ config: CacheStore.Configuration) throws -> [Int] {
        var stored: [Int] = []
        let store = try CacheStore(configuration: config)
        for i in 0..<100 {
            do {
                try store.store(bytes(100_000, seed: UInt8(i)), metadata: Data(), for: StoreKey(primary: "\(i)"))
                stored.append(i)
            } catch {
                break
            }
        }
        store.close()
        return stored
    }

    /// A store opened to free space (a purge, an `rm`) opens writable on a disk with under 64 KiB left, where any
    /// other open is read-only, and its removals give the space back. (With no byte left SQLite cannot commit the
    /// removals either; that case stays read-only in effect.)
    @Test(.enabled(if: TestMounts.canMountTmpfs, "needs permission to mount a tmpfs (root)"))
    func aStoreOpenedToFreeSpaceRemovesEntriesOnAFullDisk() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        #expect(TestMounts.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", dir.url.path]))
        defer { _ = TestMounts.run(["umount", "-l", dir.url.path]) }
        var config = testConfiguration(dir)
        config.maxDiskBytes = nil
        let stored = try storeUntilTheDiskIsFull(config)
        #expect(stored.count >= 5)
        let filler = dir.url.appendingPathComponent("filler")
        _ = FileManager.default.createFile(atPath: filler.path, contents: nil)
        if let handle = try? FileHandle(forWritingTo: filler) {
            let chunk = Data(count: 4 << 10)
            while (try? handle.write(contentsOf: chunk)) != nil {}
            // Leave 40 KiB: under the 64 KiB below which an ordinary open is read-only, enough for SQLite to
            // commit the removals.
            if let end = try? handle.seekToEnd(), end > 40 << 10 { try? handle.truncate(atOffset: end - (40 << 10)) }
            try? handle.close()
        }
        // Closed before the next open (as `close()` asks before reopening a namespace): a store only released
        // closes when its last reference goes, which a background closure can delay, and while its connection
        // is open the freeing store shares the namespace with it.
        let ordinary = try CacheStore(configuration: config)
        #expect(ordinary.isReadOnly, "an ordinary open of a nearly full disk is read-only")
        ordinary.close()
        var freeing = config
        freeing.opensToFreeSpace = true
        let store = try CacheStore(configuration: freeing)
        #expect(!store.isReadOnly)
        try store.removeAll()
        #expect(store.allEntries().isEmpty)
        store.close()
        let reopened = try CacheStore(configuration: config)
        #expect(reopened.allEntries().isEmpty)
        #expect(!reopened.isReadOnly, "the removed bodies gave the space back")
    }

    @Test(.enabled(if: TestMounts.canMountTmpfs, "needs permission to mount a tmpfs (root)"))
    func aFullDiskStillServesWhatIsStored() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        #expect(TestMounts.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", dir.url.path]))
        defer { _ = TestMounts.run(["umount", "-l", dir.url.path]) }
        var config = testConfiguration(dir)
        config.maxDiskBytes = nil
        let stored = try storeUntilTheDiskIsFull(config)
        #expect(stored.count >= 5)
        // Fill what is left, as another program would.
        let filler = dir.url.appendingPathComponent("filler")
        _ = FileManager.default.createFile(atPath: filler.path, contents: nil)
        if let handle = try? FileHandle(forWritingTo: filler) {
            let chunk = Data(count: 64 << 10)
            while (try? handle.write(contentsOf: chunk)) != nil {}
            try? handle.close()
        }
        // Every later open (a new process each time) must still serve the stored bodies.
        for _ in 0..<2 {
            let store = try CacheStore(configuration: config)
            for i in stored {
                #expect(store.entry(for: StoreKey(primary: "\(i)"))?.body == bytes(100_000, seed: UInt8(i)))
            }
            #expect(throws: CacheStoreError.self) {
                try store.store(bytes(100_000), metadata: Data(), for: StoreKey(primary: "new"))
            }
            store.close()
        }
    }

    @Test func anUnavailableStoreMissesRefusesAndTouchesNothing() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = CacheStore.unavailable(configuration: testConfiguration(dir), reason: "test")
        #expect(store.isUnavailable)
        #expect(store.isReadOnly)
        #expect(store.entry(for: StoreKey(primary: "k")) == nil)
        #expect(store.info(for: StoreKey(primary: "k")) == nil)
        #expect(store.allEntries().isEmpty)
        do {
            try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "k"))
            Issue.record("an unavailable store stored something")
        } catch {
            #expect(error.code == .permissionDenied)
            #expect(error.detail.contains("unavailable: test"))
        }
        #expect(throws: CacheStoreError.self) { try store.makeBodyWriter() }
        #expect(throws: CacheStoreError.self) { try store.removeAll() }
        #expect(store.verify(repair: true).problems.count <= 1)
        store.close()
        #expect((try FileManager.default.contentsOfDirectory(atPath: dir.url.path)).isEmpty)
    }

    @Test func aDeletedWriteAheadLogDoesNotStopTheNextOpener() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let running = try CacheStore(configuration: testConfiguration(dir))
        defer { running.close() }
        try running.store(bytes(100_000), metadata: Data(), for: StoreKey(primary: "k"))
        try running.store(bytes(10), metadata: Data(), for: StoreKey(primary: "small"))
        try FileManager.default.removeItem(at: dir.url.appendingPathComponent("default/index.sqlite-wal"))
        // Another process: it opens (possibly read-only) and answers, or the caller can fall back to unavailable.
        do {
            let other = try CacheStore(configuration: testConfiguration(dir))
            _ = other.entry(for: StoreKey(primary: "k"))
            other.close()
        } catch {
            #expect(error.code != .invalidNamespace)
        }
        _ = running.entry(for: StoreKey(primary: "small"))
    }
}
