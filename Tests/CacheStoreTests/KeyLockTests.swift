import CacheTestSupport
import Foundation
import Testing
@testable import CacheStore

/// The name of the file under `locks/` that holds `key`'s lock.
func keyLockFileName(for key: String) -> String {
    #if canImport(Darwin)
    let digits = String(KeyLockFile.hash(for: key), radix: 16)
    return "k" + String(repeating: "0", count: 16 - digits.count) + digits + ".lock"
    #else
    return "keys.lock"
    #endif
}

/// A key other than `key` whose lock hash has the same low 8 bits (the two would share one of 256 buckets).
func keySharingLowBits(with key: String, prefix: String) -> String? {
    let low = KeyLockFile.hash(for: key) & 0xff
    return (0..<100_000).lazy.map { "\(prefix)\($0)" }.first { $0 != key && KeyLockFile.hash(for: $0) & 0xff == low }
}

/// The cross-process per-key lock: exclusive per key, released by its holder, never through a symlink.
@Suite struct KeyLockTests {
    private func makeStore() throws -> (CacheStore, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keylock-\(UUID().uuidString)")
        return (try CacheStore(configuration: CacheStore.Configuration(directory: directory)), directory)
    }

    @Test func aHeldKeyMakesOthersWaitAndAReleasedOneIsFreeAtOnce() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        guard case .acquired(let first, let waited) = await store.acquireKeyLock("GET http://a/", timeout: 1) else {
            Issue.record("first lock not acquired")
            return
        }
        #expect(!waited)
        // Inside one store a held key is busy; another store (another open file description) conflicts like another process.
        guard case .timedOut = await store.acquireKeyLock("GET http://a/", timeout: 0.05) else {
            Issue.record("a held key was acquired twice")
            return
        }
        guard case .acquired(let other, _) = await store.acquireKeyLock("GET http://b/", timeout: 0) else {
            Issue.record("another key was blocked")
            return
        }
        other.release()
        first.release()
        guard case .acquired(let again, let waitedAgain) = await store.acquireKeyLock("GET http://a/", timeout: 0) else {
            Issue.record("released key not acquired")
            return
        }
        #expect(!waitedAgain)
        again.release()
        let left = try FileManager.default.contentsOfDirectory(atPath: store.directoryURL.appendingPathComponent("locks").path)
        #expect(Set(left).isSubset(of: ["keys.lock"]))
    }

    /// Locking many keys leaves at most the one lock file (Linux) or none (Apple platforms unlink a key's file
    /// before unlocking it); keys never block each other inside one store.
    @Test func lockingManyKeysLeavesAtMostOneLockFile() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        var held: [KeyLock] = []
        for i in 0..<600 {
            guard case .acquired(let lock, let waited) = await store.acquireKeyLock("GET http://a/\(i)", timeout: 0) else {
                Issue.record("key \(i) was blocked by another key of the same store")
                return
            }
            #expect(!waited)
            held.append(lock)
        }
        for lock in held { lock.release() }
        let locks = store.directoryURL.appendingPathComponent("locks").path
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: locks)).isSubset(of: ["keys.lock"]))
    }

    /// Across stores (as across processes: another open file description) a key held in one store makes the
    /// other wait for that key only, also for a key whose hash shares its low bits; released, it is free at once.
    @Test func aKeyHeldByAnotherStoreMakesOnlyThatKeyWait() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let other = try CacheStore(configuration: CacheStore.Configuration(directory: directory))
        let first = "GET http://a/0"
        let sibling = try #require(keySharingLowBits(with: first, prefix: "GET http://a/"))
        guard case .acquired(let lock, _) = await store.acquireKeyLock(first, timeout: 0) else {
            Issue.record("first lock not acquired")
            return
        }
        guard case .timedOut = await other.acquireKeyLock(first, timeout: 0.05) else {
            Issue.record("a key held by another store was acquired")
            return
        }
        guard case .acquired(let neighbour, let waitedForNeighbour) = await other.acquireKeyLock(sibling, timeout: 30) else {
            Issue.record("another key was blocked by a key held in another store")
            return
        }
        #expect(!waitedForNeighbour)
        neighbour.release()
        lock.release()
        guard case .acquired(let again, let waited) = await other.acquireKeyLock(first, timeout: 0) else {
            Issue.record("released key not acquired")
            return
        }
        #expect(!waited)
        again.release()
    }

    @Test func aSymlinkedLockDirectoryMakesLockingUnavailable() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let elsewhere = directory.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: store.directoryURL.appendingPathComponent("locks"),
                                                   withDestinationURL: elsewhere)
        guard case .unavailable = await store.acquireKeyLock("GET http://a/", timeout: 0) else {
            Issue.record("a lock was taken through a symlink")
            return
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty)
    }

    @Test func aSymlinkedLockFileIsNeverFollowed() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let locks = store.directoryURL.appendingPathComponent("locks")
        try FileManager.default.createDirectory(at: locks, withIntermediateDirectories: true)
        let target = directory.appendingPathComponent("victim")
        try Data("keep".utf8).write(to: target)
        try FileManager.default.createSymbolicLink(at: locks.appendingPathComponent(keyLockFileName(for: "k")),
                                                   withDestinationURL: target)
        guard case .unavailable = await store.acquireKeyLock("k", timeout: 0) else {
            Issue.record("a symlinked lock file was opened")
            return
        }
        #expect(try Data(contentsOf: target) == Data("keep".utf8))
    }

    /// A FIFO or a directory in the lock file's place is refused at once (never opened for a wait).
    @Test(arguments: ["fifo", "directory"])
    func aNonRegularLockFileMakesLockingUnavailable(kind: String) async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let locks = store.directoryURL.appendingPathComponent("locks")
        try FileManager.default.createDirectory(at: locks, withIntermediateDirectories: true)
        let planted = locks.appendingPathComponent(keyLockFileName(for: "k"))
        if kind == "fifo" {
            #expect(mkfifo(planted.path, 0o600) == 0)
        } else {
            try FileManager.default.createDirectory(at: planted, withIntermediateDirectories: false)
        }
        guard case .unavailable = await store.acquireKeyLock("k", timeout: 30) else {
            Issue.record("a \(kind) in the lock file's place was locked")
            return
        }
    }

    #if os(Linux)
    /// Another process holding one key's byte of `locks/keys.lock` (a classic fcntl lock: it conflicts with the
    /// store's open-file-description locks like another store's) makes that key wait and no other; a lock over
    /// the whole file, which is no key lock, is not waited for.
    @Test func anotherProcessHoldingOneKeyDelaysOnlyThatKeyAndAWholeFileLockIsNotWaitedFor() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let held = "GET http://a/held"
        let sibling = try #require(keySharingLowBits(with: held, prefix: "GET http://a/"))
        let locks = store.directoryURL.appendingPathComponent("locks")
        try FileManager.default.createDirectory(at: locks, withIntermediateDirectories: true)
        let file = locks.appendingPathComponent("keys.lock").path

        let child = try await lockingChild(file: file, start: KeyLockFile.hash(for: held), length: 1, in: directory)
        guard case .timedOut = await store.acquireKeyLock(held, timeout: 0.05) else {
            Issue.record("a key held by another process was acquired")
            return
        }
        guard case .acquired(let other, let waited) = await store.acquireKeyLock(sibling, timeout: 30) else {
            Issue.record("another key waited for the key another process holds")
            return
        }
        #expect(!waited)
        #expect(child.termination == nil, "the other process still held its key")
        other.release()
        child.closeStdin()
        #expect(child.wait(timeout: .seconds(10)) != nil)
        guard case .acquired(let freed, _) = await store.acquireKeyLock(held, timeout: 10) else {
            Issue.record("a key released by its process's exit was not acquired")
            return
        }
        freed.release()

        let whole = try await lockingChild(file: file, start: 0, length: 0, in: directory)
        guard case .unavailable = await store.acquireKeyLock(held, timeout: 30) else {
            Issue.record("a whole-file lock was waited for or ignored")
            return
        }
        #expect(whole.termination == nil, "the whole-file lock was still held")
        whole.closeStdin()
        #expect(whole.wait(timeout: .seconds(10)) != nil)
    }

    /// A python3 child holding an exclusive fcntl lock on `length` bytes (0 = to the end) at `start` of `file`
    /// until its standard input closes; returns once it holds it (bounded: 20 s).
    private func lockingChild(file: String, start: UInt64, length: Int, in directory: URL) async throws -> ChildProcess {
        let marker = directory.appendingPathComponent("locked-\(UUID().uuidString)")
        let script = """
            import fcntl, os, sys
            fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, int(sys.argv[3]), int(sys.argv[2]))
            open(sys.argv[4], "w").close()
            sys.stdin.read()
            """
        let child = try ChildProcess(["/usr/bin/env", "python3", "-c", script, file, String(start), String(length),
                                      marker.path], stdout: .discard)
        for _ in 0..<2_000 where !FileManager.default.fileExists(atPath: marker.path) && child.termination == nil {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        try #require(FileManager.default.fileExists(atPath: marker.path), "the child took its lock")
        return child
    }
    #endif
}
