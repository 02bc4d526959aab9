import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The cache being unusable never makes a download fail: a refused namespace (a symbolic link planted in it), an
/// index that cannot be opened, a read-only store — the client works without the cache (or read-only), and bodies
/// it cannot store land in a private mkdtemp directory it removes at close, never in a predictable shared one.
@Suite struct UnusableCacheDownloadTests {
    func makeCache(_ transport: ScriptedTransport, directory: URL) throws -> DownloadCache {
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.transport = transport
        configuration.log = { _ in }
        configuration.inMemoryBodyLimit = 64 << 10
        return try DownloadCache(configuration: configuration)
    }

    func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-unusable-\(UUID().uuidString)")
    }

    @Test func aRefusedNamespaceWorksUncached() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let victim = temporaryDirectory()
        try FileManager.default.createDirectory(at: victim, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: victim) }
        try Data("keep".utf8).write(to: victim.appendingPathComponent("keep"))
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("default"),
                                                withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: directory.appendingPathComponent("default/tmp"),
                                                   withDestinationURL: victim)
        let transport = ScriptedTransport()
        let cache = try makeCache(transport, directory: directory)
        #expect(!cache.isCacheAvailable)
        let url = URL(string: "http://example.test/a")!
        for _ in 0..<2 {
            transport.enqueue(status: 200, headers: [("Cache-Control", "max-age=600")], body: String(repeating: "x", count: 300_000))
            let response = try await cache.response(for: CacheRequest(url: url))
            #expect(response.status == 200 && response.source == .network)
            #expect(try response.data().count == 300_000)
        }
        #expect(transport.requests.count == 2, "nothing was stored")
        await cache.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim.path) == ["keep"])
    }

    @Test(.enabled(if: TestMounts.canMountTmpfs, "needs permission to mount a tmpfs (root ignores file modes)"))
    func aReadOnlyCacheDownloadsIntoAPrivateDirectoryRemovedAtClose() async throws {
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(TestMounts.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", directory.path]))
        defer { _ = TestMounts.run(["umount", "-l", directory.path]) }
        do {
            let seed = ScriptedTransport()
            seed.enqueue(status: 200, headers: [("Cache-Control", "max-age=600")], body: "seed")
            let cache = try makeCache(seed, directory: directory)
            _ = try await cache.response(for: CacheRequest(url: URL(string: "http://example.test/seed")!))
            await cache.close()
        }
        // A remount fails with EBUSY while a file on the mount is still open for writing: under load the closed
        // cache's last references (and its descriptors) can outlive the scope for a moment. Bounded: 5 s.
        var remounted = false
        for _ in 0..<50 where !remounted {
            remounted = TestMounts.run(["mount", "-o", "remount,ro", directory.path])
            if !remounted { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(remounted)
        // A predictable shared name another user created first (0777) must not be used.
        let shared = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-downloads-\(getuid())")
        let madeShared = !FileManager.default.fileExists(atPath: shared.path)
        try? FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        defer { if madeShared { try? FileManager.default.removeItem(at: shared) } }
        chmod(shared.path, 0o777)
        let before = Set((try? FileManager.default.contentsOfDirectory(atPath: shared.path)) ?? [])
        let transport = ScriptedTransport()
        transport.enqueue(status: 200, headers: [("Cache-Control", "max-age=600")], body: String(repeating: "y", count: 2_000_000))
        let cache = try makeCache(transport, directory: directory)
        let response = try await cache.response(for: CacheRequest(url: URL(string: "http://example.test/big")!))
        #expect(try response.data().count == 2_000_000)
        guard case .file(let file) = response.body else {
            Issue.record("a 2 MB body was expected as a file")
            return
        }
        let parent = file.deletingLastPathComponent()
        #expect(parent.lastPathComponent.hasPrefix("dlcache-downloads-") && parent.path != shared.path, "\(parent.path)")
        var info = stat()
        #expect(stat(parent.path, &info) == 0 && info.st_mode & 0o077 == 0 && info.st_uid == getuid())
        #expect(Set((try? FileManager.default.contentsOfDirectory(atPath: shared.path)) ?? []) == before)
        await cache.close()
        #expect(!FileManager.default.fileExists(atPath: parent.path), "the private directory is removed at close")
    }
}
