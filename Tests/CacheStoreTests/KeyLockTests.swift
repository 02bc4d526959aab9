import Foundation
import Testing
@testable import CacheStore

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
        // flock locks belong to an open file description: a second one in this process conflicts like another process.
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
        #expect(Set(left).isSubset(of: [KeyLockFile.name(for: "GET http://a/"), KeyLockFile.name(for: "GET http://b/")]))
    }

    /// Locking many keys creates at most one file per bucket and deletes none, so filling a cache pays few file
    /// creations; keys sharing a bucket never block each other inside one store.
    @Test func lockFilesAreBucketsThatStay() async throws {
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
        let locks = store.directoryURL.appendingPathComponent("locks").path
        let files = try FileManager.default.contentsOfDirectory(atPath: locks)
        #expect(files.count <= Int(KeyLockFile.bucketCount))
        for lock in held { lock.release() }
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: locks)) == Set(files))
    }

    /// Across stores (as across processes: another open file description) a key held in one store makes the
    /// other wait, also for another key of the same bucket; released, it is free at once.
    @Test func aBucketHeldByAnotherStoreMakesItWait() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let other = try CacheStore(configuration: CacheStore.Configuration(directory: directory))
        let first = "GET http://a/0"
        let sibling = try #require((1..<100_000).lazy.map { "GET http://a/\($0)" }
            .first { KeyLockFile.name(for: $0) == KeyLockFile.name(for: first) })
        guard case .acquired(let lock, _) = await store.acquireKeyLock(first, timeout: 0) else {
            Issue.record("first lock not acquired")
            return
        }
        guard case .timedOut = await other.acquireKeyLock(first, timeout: 0.05) else {
            Issue.record("a key held by another store was acquired")
            return
        }
        guard case .timedOut = await other.acquireKeyLock(sibling, timeout: 0.05) else {
            Issue.record("a bucket held by another store was acquired")
            return
        }
        lock.release()
        guard case .acquired(let again, let waited) = await other.acquireKeyLock(sibling, timeout: 0) else {
            Issue.record("released bucket not acquired")
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
        try FileManager.default.createSymbolicLink(at: locks.appendingPathComponent(KeyLockFile.name(for: "k")),
                                                   withDestinationURL: target)
        guard case .unavailable = await store.acquireKeyLock("k", timeout: 0) else {
            Issue.record("a symlinked lock file was opened")
            return
        }
        #expect(try Data(contentsOf: target) == Data("keep".utf8))
    }
}
