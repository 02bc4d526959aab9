import Foundation
import Testing
@testable import CacheStore

/// Another local user must not read the cache: every file the store creates is 0600 and every directory 0700
/// (whatever the umask), and an existing namespace directory (or store file) others may access is tightened,
/// with a log line saying so.
@Suite(.serialized) struct FileModeTests {
    /// Every entry under `root` with its permission bits.
    func modes(_ root: URL) -> [String: (mode: UInt16, isDirectory: Bool)] {
        var result: [String: (UInt16, Bool)] = [:]
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [:] }
        while let relative = walker.nextObject() as? String {
            var info = stat()
            guard lstat(root.path + "/" + relative, &info) == 0 else { continue }
            result[relative] = (UInt16(info.st_mode & 0o7777), (info.st_mode & S_IFMT) == S_IFDIR)
        }
        return result
    }

    @Test func everyFileIsOwnerOnlyWhateverTheUmask() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let old = umask(0o022)
        defer { umask(old) }
        let cacheRoot = dir.url.appendingPathComponent("new-cache-root")
        var config = testConfiguration(dir)
        config.directory = cacheRoot
        let store = try CacheStore(configuration: config)
        try store.store(bytes(100_000), metadata: Data("m".utf8), for: StoreKey(primary: "blob"))
        try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "inline"))
        let writer = try store.makeBodyWriter()
        try writer.write(bytes(10))
        let found = modes(cacheRoot)
        #expect(found.keys.contains("default/index.sqlite"))
        #expect(found.keys.contains("default/index.sqlite-wal"))
        #expect(found.keys.contains("default/index.sqlite-shm"))
        for (path, entry) in found {
            #expect(entry.mode == (entry.isDirectory ? 0o700 : 0o600), "\(path) has mode \(String(entry.mode, radix: 8))")
        }
        writer.abort()
        store.close()
        var info = stat()
        #expect(stat(cacheRoot.path, &info) == 0 && info.st_mode & 0o077 == 0, "the created cache root is owner-only")
    }

    @Test func aLooserExistingNamespaceIsTightenedWithAWarning() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try CacheStore(configuration: testConfiguration(dir))
            try store.store(bytes(100_000), metadata: Data(), for: StoreKey(primary: "k"))
            store.close()
        }
        let namespace = dir.url.appendingPathComponent("default")
        #expect(chmod(namespace.path, 0o755) == 0)
        #expect(chmod(namespace.appendingPathComponent("blobs").path, 0o777) == 0)
        #expect(chmod(namespace.appendingPathComponent("index.sqlite").path, 0o644) == 0)
        let log = LogSink()
        let store = try CacheStore(configuration: testConfiguration(dir, log: log))
        defer { store.close() }
        let found = modes(dir.url)
        #expect(found["default"]?.mode == 0o700)
        #expect(found["default/blobs"]?.mode == 0o700)
        #expect(found["default/index.sqlite"]?.mode == 0o600)
        #expect(log.lines.contains { $0.contains("\(namespace.path) had mode 755") && $0.contains("tightened to 700") },
                "\(log.lines)")
        #expect(log.lines.contains { $0.contains("index.sqlite had mode 644") }, "\(log.lines)")
        #expect(store.entry(for: StoreKey(primary: "k"))?.body == bytes(100_000))
    }

    /// A namespace directory or index another user owns (planted in a shared cache directory before this user's
    /// first run) is refused (`.unsafeFile`): its owner could have stored any response there for this user to be
    /// served, and could read what this user would write. A store configured read-only still reads it.
    @Test(.enabled(if: getuid() == 0, "giving files to another user needs root"),
          arguments: ["", "index.sqlite"])
    func aNamespaceAnotherUserOwnsIsRefused(owned: String) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try CacheStore(configuration: testConfiguration(dir))
            try store.store(bytes(10), metadata: Data(), for: StoreKey(primary: "k"))
            store.close()
        }
        let namespace = dir.url.appendingPathComponent("default")
        let target = owned.isEmpty ? namespace : namespace.appendingPathComponent(owned)
        #expect(chown(target.path, 65534, 65534) == 0)
        let log = LogSink()
        do {
            let store = try CacheStore(configuration: testConfiguration(dir, log: log))
            store.close()
            Issue.record("a namespace owned by uid 65534 was opened")
        } catch {
            #expect(error.code == .unsafeFile, "\(error)")
            #expect(error.detail.contains("owned by uid 65534"), "\(error)")
        }
        var inspecting = testConfiguration(dir, log: log)
        inspecting.readOnly = true
        let store = try CacheStore(configuration: inspecting)
        defer { store.close() }
        #expect(store.entry(for: StoreKey(primary: "k"))?.body == bytes(10))
        #expect(throws: (any Error).self) {
            try store.store(Data("secret".utf8), metadata: Data(), for: StoreKey(primary: "secret"))
        }
    }
    /// A namespace directory another user made (empty, writable by anyone) is refused before the store creates
    /// anything in it: no `blobs/`, `tmp/`, `sessions/`, index or lock of this user's appear there.
    @Test(.enabled(if: getuid() == 0, "giving files to another user needs root"))
    func aNamespaceAnotherUserOwnsGetsNothingCreatedInIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let namespace = dir.url.appendingPathComponent("default")
        try FileManager.default.createDirectory(at: namespace, withIntermediateDirectories: true)
        #expect(chmod(namespace.path, 0o777) == 0)
        #expect(chown(namespace.path, 65534, 65534) == 0)
        do {
            let store = try CacheStore(configuration: testConfiguration(dir))
            store.close()
            Issue.record("a namespace owned by uid 65534 was opened")
        } catch {
            #expect(error.code == .unsafeFile, "\(error)")
            #expect(error.detail.contains("owned by uid 65534"), "\(error)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: namespace.path) == [])
    }
}
