import CacheTestSupport
import Foundation
import Testing
@testable import CacheStore

/// `setpriv` exists and this process is root, so a child can run as uid/gid 65534 (nobody).
let canRunAsNobody: Bool = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

/// A cache that may be read but not written (chmod -R a-w, a read-only mount, another user's cache)
/// opens read-only: reads hit, writes throw `.permissionDenied`, nothing is created or changed.
///
/// Root ignores permission bits, so these tests make read-only real in three ways: the `readOnly` flag (same code
/// path once detected), a tmpfs remounted read-only (EROFS applies to root too), and a child process running as
/// nobody on a cache root wrote and made read-only.
@Suite struct ReadOnlyTests {
    static let keys = ["file", "inline", "gone"].map { StoreKey(primary: $0) }

    /// Writes "file" (40 KB blob), "inline" (100 B) and "session" entries, then closes the store.
    func populate(_ dir: TemporaryDirectory) throws {
        let store = try CacheStore(configuration: testConfiguration(dir))
        try store.store(bytes(40_000, seed: 1), metadata: Data("m1".utf8), for: Self.keys[0])
        try store.store(bytes(100, seed: 2), metadata: Data("m2".utf8), for: Self.keys[1])
        try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "session"), storageClass: .session)
        store.close()
    }

    /// Every write API of `store` throws `.permissionDenied`.
    func expectWritesRefused(_ store: CacheStore) {
        let key = Self.keys[0]
        let attempts: [(String, () throws(CacheStoreError) -> Void)] = [
            ("store", { () throws(CacheStoreError) in try store.store(bytes(10), metadata: Data(), for: key) }),
            ("store file", { () throws(CacheStoreError) in try store.store(bytes(50_000), metadata: Data(), for: key) }),
            ("makeBodyWriter", { () throws(CacheStoreError) in _ = try store.makeBodyWriter() }),
            ("updateMetadata", { () throws(CacheStoreError) in try store.updateMetadata(Data(), for: key) }),
            ("setPinned", { () throws(CacheStoreError) in try store.setPinned(true, for: key) }),
            ("remove", { () throws(CacheStoreError) in try store.remove(key) }),
            ("removeAll", { () throws(CacheStoreError) in try store.removeAll() }),
            ("trim", { () throws(CacheStoreError) in try store.trim() }),
            ("clearSession", { () throws(CacheStoreError) in try store.clearSession() }),
        ]
        for (name, attempt) in attempts {
            do {
                try attempt()
                Issue.record("\(name) succeeded on a read-only store")
            } catch {
                #expect(error.code == .permissionDenied, "\(name): \(error)")
            }
        }
    }

    @Test func aStoreOpenedReadOnlyReadsAndChangesNothing() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try populate(dir)
        // SQLite's WAL coordination files (-wal, -shm) are created when the directory allows it, so the store can
        // read while another process writes; they change no data. Everything else must stay as it was.
        func snapshot() -> [String: String] {
            treeSnapshot(dir.url).filter { $0.key != "default" && !$0.key.hasPrefix("default/index.sqlite-") }
        }
        let before = snapshot()
        var config = testConfiguration(dir)
        config.readOnly = true
        let store = try CacheStore(configuration: config)
        #expect(store.isReadOnly)
        #expect(store.readOnlyReason != nil)
        #expect(store.entry(for: Self.keys[0])?.body == bytes(40_000, seed: 1))  // disk hit (blob file)
        #expect(store.entry(for: Self.keys[0])?.body == bytes(40_000, seed: 1))  // memory hit
        #expect(store.entry(for: Self.keys[1])?.body == bytes(100, seed: 2))  // inline body
        #expect(store.entry(for: Self.keys[2]) == nil)
        #expect(store.info(for: Self.keys[1])?.metadata == Data("m2".utf8))
        #expect(store.bodyFileURL(for: Self.keys[0]) != nil)
        #expect(store.allEntries().count == 3)  // a read-only open runs no recovery: the session entry stays
        #expect(store.verify(repair: false).ok)
        #expect(store.verify(repair: true).ok)
        let stats = store.statistics
        #expect(stats.memoryHits == 1 && stats.diskHits == 2 && stats.diskMisses == 1)
        expectWritesRefused(store)
        store.close()
        #expect(snapshot() == before)
    }

    @Test func repairOnAReadOnlyStoreSaysWhyNothingWasRepaired() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try populate(dir)
        let orphan = dir.url.appendingPathComponent("default/blobs/00000000000000000000000000000000")
        try bytes(10).write(to: orphan)
        var config = testConfiguration(dir)
        config.readOnly = true
        let store = try CacheStore(configuration: config)
        let report = store.verify(repair: true)
        #expect(report.repaired == 0)
        #expect(report.problems.map(\.kind) == ["orphan-body", "read-only"])
        #expect(report.unresolved == 2)
        #expect(FileManager.default.fileExists(atPath: orphan.path))
    }

    @Test(.enabled(if: TestMounts.canMountTmpfs, "needs permission to mount a tmpfs (root)"))
    func aStoreOnAReadOnlyMountOpensReadOnly() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        #expect(TestMounts.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir.url.path]))
        defer { _ = TestMounts.run(["umount", "-l", dir.url.path]) }
        try populate(dir)
        #expect(TestMounts.run(["mount", "-o", "remount,ro", dir.url.path]))
        let log = LogSink()
        let store = try CacheStore(configuration: testConfiguration(dir, log: log))
        #expect(store.isReadOnly)
        #expect(log.lines.contains { $0.contains("opened read-only") })
        #expect(store.entry(for: Self.keys[0])?.body == bytes(40_000, seed: 1))
        #expect(store.entry(for: Self.keys[1])?.body == bytes(100, seed: 2))
        expectWritesRefused(store)
        store.close()
    }

    @Test(.enabled(if: getuid() != 0, "root ignores permission bits (the tmpfs and nobody tests cover root)"))
    func aCacheMadeReadOnlyByItsOwnerOpensReadOnly() throws {
        let dir = TemporaryDirectory()
        defer {
            _ = try? runChild(URL(fileURLWithPath: "/bin/chmod"), ["-R", "u+w", dir.url.path])
            dir.remove()
        }
        try populate(dir)
        let chmod = try runChild(URL(fileURLWithPath: "/bin/chmod"), ["-R", "a-w", dir.url.path])
        #expect(chmod.status == 0)
        let store = try CacheStore(configuration: testConfiguration(dir))
        #expect(store.isReadOnly)
        #expect(store.entry(for: Self.keys[0])?.body == bytes(40_000, seed: 1))
        expectWritesRefused(store)
    }

    /// The usual way to share a read-only cache: root writes the cache and makes it read-only (`chmod -R a-w`, plus `a+rX` so others may
    /// read it at all — a namespace is created owner-only), then an unprivileged user uses it.
    @Test(.enabled(if: canRunAsNobody && childWriterBinary != nil, "needs root, setpriv and dlcache-bench"))
    func anUnprivilegedUserReadsACacheRootMadeReadOnly() throws {
        let probe = try probeAsNobody(afterChmod: "a-w,a+rX")
        #expect(probe.status == 0, "\(probe.output)")
        #expect(probe.output.split(separator: "\n") == [
            "READONLY true", "HIT k0 42561", "HIT k1 480", "HIT k2 8399", "WRITE permissionDenied",
        ], "\(probe.output)")
    }

    /// Without `a+rX` the owner-only namespace cannot even be read by another user: the error says so (a typed
    /// `.permissionDenied` naming owner and mode), instead of "mkdir …/blobs: Permission denied".
    @Test(.enabled(if: canRunAsNobody && childWriterBinary != nil, "needs root, setpriv and dlcache-bench"))
    func anUnreadableCacheIsAClearPermissionError() throws {
        let probe = try probeAsNobody(afterChmod: "a-w")
        #expect(probe.status == 2)
        #expect(probe.output.hasPrefix("OPEN-ERROR permissionDenied cannot read the cache at"), "\(probe.output)")
        #expect(!probe.output.contains("mkdir"))
    }

    /// Root writes a cache with the child writer (entries k0: 42,561 B, a blob; k1: 480 B, inline; k2: 8,399 B, a
    /// blob), runs `chmod -R <mode>` on it, then returns what `read-only-probe` run as nobody printed.
    private func probeAsNobody(afterChmod mode: String) throws -> (status: Int32, output: String) {
        let binary = try #require(childWriterBinary)
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        chmod(dir.url.path, 0o755)
        let writer = try runChild(binary, ["store-child-writer", dir.url.path, "9", "3"])
        #expect(writer.status == 0)
        let chmod = try runChild(URL(fileURLWithPath: "/bin/chmod"), ["-R", mode, dir.url.path])
        #expect(chmod.status == 0)
        return try runChild(binary, ["store-child-writer", dir.url.path, "read-only-probe"], asNobody: true)
    }
}
