import CacheTestSupport
import DownloadCache
@testable import CacheStore
import Foundation
import HTTPCacheSemantics
import Testing

/// Whatever is planted at the key-lock file's path (a symbolic link, a FIFO, a directory) is never followed or
/// waited on: the GET fetches without the cross-process lock and still stores and serves the exact bytes.
@Suite struct PlantedLockFileTests {
    @Test(arguments: ["symlink", "fifo", "directory"])
    func aPlantedLockFileDoesNotStopADownload(kind: String) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-planted-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try await origin.configure(path: "/file", headers: [("Cache-Control", "max-age=600")], body: "exact bytes")
        var configuration = DownloadCache.Configuration(directory: root.appendingPathComponent("cache"))
        configuration.log = { _ in }
        let cache = try DownloadCache(configuration: configuration)
        let url = origin.url("/file")
        let locks = cache.directoryURL.appendingPathComponent("locks")
        try FileManager.default.createDirectory(at: locks, withIntermediateDirectories: true)
        let planted = locks.appendingPathComponent(lockFileName(for: RFC9111.primaryKey(method: "GET", url: url)))
        let victim = root.appendingPathComponent("victim")
        try Data("keep".utf8).write(to: victim)
        switch kind {
        case "symlink": try FileManager.default.createSymbolicLink(at: planted, withDestinationURL: victim)
        case "fifo": #expect(mkfifo(planted.path, 0o600) == 0)
        default: try FileManager.default.createDirectory(at: planted, withIntermediateDirectories: false)
        }

        let fetched = try await cache.response(for: CacheRequest(url: url))
        #expect(fetched.source == .network)
        #expect(try fetched.data() == Data("exact bytes".utf8))
        let hit = try await cache.response(for: CacheRequest(url: url))
        #expect(hit.source == .cache)
        #expect(try hit.data() == Data("exact bytes".utf8))
        #expect(try Data(contentsOf: victim) == Data("keep".utf8))
        #expect(try await origin.hits("/file").total == 1)
        await cache.close()
    }

    /// The file under `locks/` that holds `key`'s lock.
    private func lockFileName(for key: String) -> String {
        #if canImport(Darwin)
        let digits = String(KeyLockFile.hash(for: key), radix: 16)
        return "k" + String(repeating: "0", count: 16 - digits.count) + digits + ".lock"
        #else
        return "keys.lock"
        #endif
    }
}
