import Foundation
import Testing
@testable import CacheStore

/// A local attacker who may write the cache directory (not the namespace directory inside it, which is the
/// victim's and 0700) renames the namespace directory away and puts another directory, with an index of their
/// own, or a symbolic link to a place of their choosing, at its name. The store opened that directory by
/// descriptor; SQLite must reach the index, its `-wal` and `-shm` files and the directory it syncs through that
/// same descriptor, never by the path: otherwise the victim is served the attacker's index, or SQLite creates
/// the victim's files where the link points.
@Suite struct SQLiteOnlyUsesTheOpenedNamespaceDirectoryTests {
    /// The namespace directory and the names the attacker works with.
    struct Layout {
        let dir: TemporaryDirectory
        let elsewhere: TemporaryDirectory
        var namespace: URL { dir.url.appendingPathComponent("default") }
        var moved: URL { dir.url.appendingPathComponent("default-moved") }

        init(_ label: String = #function) {
            dir = TemporaryDirectory(label)
            elsewhere = TemporaryDirectory(label + "elsewhere")
        }

        func remove() {
            dir.remove()
            elsewhere.remove()
        }

        /// Renames the namespace directory away and puts a symbolic link to `elsewhere` at its name; `elsewhere`
        /// gets an `index.sqlite` holding `plantedIndex` (so that a look-up of the database by its path finds one).
        func swapForLink(plantedIndex: Data) throws {
            try plantedIndex.write(to: elsewhere.url.appendingPathComponent("index.sqlite"))
            try FileManager.default.moveItem(at: namespace, to: moved)
            try FileManager.default.createSymbolicLink(at: namespace, withDestinationURL: elsewhere.url)
        }

        /// Renames the namespace directory away and puts `planted` (a namespace directory) at its name.
        func swap(for planted: URL) throws {
            try FileManager.default.moveItem(at: namespace, to: moved)
            try FileManager.default.moveItem(at: planted, to: namespace)
        }

        /// Puts the real namespace directory back at its name (what was at the name goes to `aside`).
        func restore(aside: URL? = nil) throws {
            if let aside {
                try FileManager.default.moveItem(at: namespace, to: aside)
            } else {
                try FileManager.default.removeItem(at: namespace)
            }
            try FileManager.default.moveItem(at: moved, to: namespace)
        }

        /// What is in `elsewhere` (must stay the planted index alone).
        var elsewhereContents: [String] {
            (try? FileManager.default.contentsOfDirectory(atPath: elsewhere.url.path)) ?? ["<unreadable>"]
        }

        /// Whether `elsewhere` holds the planted index, unchanged, and nothing else.
        func elsewhereHoldsOnly(_ plantedIndex: Data) -> Bool {
            elsewhereContents == ["index.sqlite"]
                && (try? Data(contentsOf: elsewhere.url.appendingPathComponent("index.sqlite"))) == plantedIndex
        }
    }

    /// The namespace `default` of a fresh directory holding one entry `planted` with body `bytes(30, seed: 9)`:
    /// an index the attacker made. Returns the namespace directory and the bytes of its index file.
    func plantedNamespace(_ label: String = #function) throws -> (TemporaryDirectory, URL, Data) {
        let dir = TemporaryDirectory(label + "planted")
        let store = try CacheStore(configuration: testConfiguration(dir))
        try store.store(bytes(30, seed: 9), metadata: Data("planted".utf8), for: StoreKey(primary: "planted"))
        store.close()
        let namespace = dir.url.appendingPathComponent("default")
        // The close left an empty WAL and the shared memory: gone, so a -shm there later was made by SQLite.
        for suffix in ["-wal", "-shm"] {
            try FileManager.default.removeItem(at: namespace.appendingPathComponent("index.sqlite" + suffix))
        }
        let index = try Data(contentsOf: namespace.appendingPathComponent("index.sqlite"))
        return (dir, namespace, index)
    }

    func size(_ url: URL) -> Int64? {
        var info = stat()
        return stat(url.path, &info) == 0 ? Int64(info.st_size) : nil
    }

    @Test func anOpenStoreWhoseDirectoryIsSwappedForALinkWritesReadsAndCheckpointsInItsOwnDirectory() throws {
        let layout = Layout()
        defer { layout.remove() }
        let (plantedDir, _, plantedIndex) = try plantedNamespace()
        defer { plantedDir.remove() }
        let store = try CacheStore(configuration: testConfiguration(layout.dir))
        try store.store(bytes(20_000), metadata: Data("a".utf8), for: StoreKey(primary: "before-blob"))
        try store.store(bytes(10), metadata: Data("b".utf8), for: StoreKey(primary: "before-inline"))
        try layout.swapForLink(plantedIndex: plantedIndex)
        for i in 0..<20 {
            try store.store(bytes(100, seed: UInt8(i)), metadata: Data("\(i)".utf8), for: StoreKey(primary: "after-\(i)"))
        }
        try store.store(bytes(30_000, seed: 3), metadata: Data(), for: StoreKey(primary: "after-blob"))
        try store.remove(StoreKey(primary: "before-inline"))
        #expect(store.entry(for: StoreKey(primary: "before-blob"))?.body == bytes(20_000))
        #expect(store.entry(for: StoreKey(primary: "after-7"))?.body == bytes(100, seed: 7))
        #expect(store.verify(repair: false).checked >= 20)
        store.close()
        #expect(layout.elsewhereHoldsOnly(plantedIndex), "where the link points: \(layout.elsewhereContents)")
        // The close checkpointed the WAL of the store's own index: SQLite saw its database where it opened it
        // (had it looked up the path, it would have found the database gone and kept the WAL as it was).
        #expect(size(layout.moved.appendingPathComponent("index.sqlite-wal")) == 0)
        try layout.restore()
        let reopened = try CacheStore(configuration: testConfiguration(layout.dir))
        defer { reopened.close() }
        #expect(reopened.entry(for: StoreKey(primary: "after-19"))?.body == bytes(100, seed: 19))
        #expect(reopened.entry(for: StoreKey(primary: "after-blob"))?.body == bytes(30_000, seed: 3))
        #expect(reopened.entry(for: StoreKey(primary: "before-blob"))?.body == bytes(20_000))
        #expect(reopened.entry(for: StoreKey(primary: "before-inline")) == nil)
    }

    @Test func anOpenStoreWhoseDirectoryIsSwappedForAPlantedOneNeverUsesThePlantedIndex() throws {
        let layout = Layout()
        defer { layout.remove() }
        let (plantedDir, planted, plantedIndex) = try plantedNamespace()
        defer { plantedDir.remove() }
        let store = try CacheStore(configuration: testConfiguration(layout.dir))
        try store.store(bytes(10), metadata: Data("mine".utf8), for: StoreKey(primary: "mine"))
        try layout.swap(for: planted)
        #expect(store.entry(for: StoreKey(primary: "planted")) == nil)
        try store.store(bytes(50, seed: 5), metadata: Data(), for: StoreKey(primary: "later"))
        #expect(store.entry(for: StoreKey(primary: "mine"))?.body == bytes(10))
        store.close()
        let atName = layout.namespace
        #expect(try Data(contentsOf: atName.appendingPathComponent("index.sqlite")) == plantedIndex)
        #expect(!FileManager.default.fileExists(atPath: atName.appendingPathComponent("index.sqlite-shm").path))
        #expect(size(layout.moved.appendingPathComponent("index.sqlite-wal")) == 0)
        try layout.restore(aside: plantedDir.url.appendingPathComponent("default"))
        let reopened = try CacheStore(configuration: testConfiguration(layout.dir))
        defer { reopened.close() }
        #expect(reopened.entry(for: StoreKey(primary: "later"))?.body == bytes(50, seed: 5))
        #expect(reopened.entry(for: StoreKey(primary: "planted")) == nil)
    }

    /// The swap made while the store opens: `step` is where (`"index-opening"`: after the store checked the
    /// directory, before SQLite opened the index; `"index-opened"`: SQLite opened the database file, but not yet
    /// its `-wal` and `-shm`, which it opens when it first reads). The store refuses the namespace (its name no
    /// longer names the directory it opened), and nothing is created where the link points.
    @Test(arguments: ["index-opening", "index-opened"], [false, true])
    func aDirectorySwappedForALinkWhileTheStoreOpensGetsNoFile(step: String, readOnly: Bool) throws {
        let layout = Layout()
        defer { layout.remove() }
        let (plantedDir, _, plantedIndex) = try plantedNamespace()
        defer { plantedDir.remove() }
        let first = try CacheStore(configuration: testConfiguration(layout.dir))
        try first.store(bytes(10), metadata: Data(), for: StoreKey(primary: "x"))
        first.close()
        var configuration = testConfiguration(layout.dir)
        configuration.readOnly = readOnly
        let swapped = SwapFlag(false)
        configuration.faultInjection = { (name: String) throws(CacheStoreError) in
            guard name == step, !swapped.exchange(true) else { return }
            do { try layout.swapForLink(plantedIndex: plantedIndex) } catch { Issue.record("swap: \(error)") }
        }
        #expect(throws: CacheStoreError.self) { _ = try CacheStore(configuration: configuration) }
        #expect(swapped.value)
        #expect(layout.elsewhereHoldsOnly(plantedIndex), "where the link points: \(layout.elsewhereContents)")
        try layout.restore()
        let reopened = try CacheStore(configuration: testConfiguration(layout.dir))
        defer { reopened.close() }
        #expect(reopened.entry(for: StoreKey(primary: "x"))?.body == bytes(10))
    }

    @Test(arguments: ["index-opening", "index-opened"], [false, true])
    func aDirectorySwappedForAPlantedOneWhileTheStoreOpensLeavesThePlantedIndexUnread(step: String,
                                                                                      readOnly: Bool) throws {
        let layout = Layout()
        defer { layout.remove() }
        let (plantedDir, planted, plantedIndex) = try plantedNamespace()
        defer { plantedDir.remove() }
        let first = try CacheStore(configuration: testConfiguration(layout.dir))
        try first.store(bytes(10), metadata: Data(), for: StoreKey(primary: "x"))
        first.close()
        var configuration = testConfiguration(layout.dir)
        configuration.readOnly = readOnly
        let swapped = SwapFlag(false)
        configuration.faultInjection = { (name: String) throws(CacheStoreError) in
            guard name == step, !swapped.exchange(true) else { return }
            do { try layout.swap(for: planted) } catch { Issue.record("swap: \(error)") }
        }
        #expect(throws: CacheStoreError.self) { _ = try CacheStore(configuration: configuration) }
        #expect(swapped.value)
        let atName = layout.namespace
        #expect(try Data(contentsOf: atName.appendingPathComponent("index.sqlite")) == plantedIndex)
        // SQLite never opened the planted index: no shared-memory file was made next to it.
        #expect(!FileManager.default.fileExists(atPath: atName.appendingPathComponent("index.sqlite-shm").path))
    }
}

/// A flag a `@Sendable` closure sets.
private final class SwapFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Bool
    init(_ value: Bool) { stored = value }
    var value: Bool { lock.withLock { stored } }
    func exchange(_ value: Bool) -> Bool {
        lock.withLock {
            let old = stored
            stored = value
            return old
        }
    }
}
