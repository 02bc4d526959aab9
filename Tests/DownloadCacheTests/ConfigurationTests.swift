import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Synchronization
import Testing

/// What `DownloadCache.Configuration` hands to the store.
@Suite struct ConfigurationTests {
    /// The store's own log lines (here: recovery of a leftover temporary file) reach the client's `log`, so a
    /// caller that silences or redirects it (the CLI without -v) also silences the store.
    @Test func storeLogLinesGoToTheClientLog() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("dlcache-config-tests-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let tmp = directory.appendingPathComponent("default/tmp", isDirectory: true)
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        try Data("debris".utf8).write(to: tmp.appendingPathComponent("leftover"))

        let lines = Mutex<[String]>([])
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.log = { line in lines.withLock { $0.append(line) } }
        let cache = try DownloadCache(configuration: configuration)
        _ = cache.store.statistics
        let logged = lines.withLock { $0 }
        #expect(logged.contains { $0.hasPrefix("store: ") && $0.contains("temporary") }, "\(logged)")
        #expect(!FileManager.default.fileExists(atPath: tmp.appendingPathComponent("leftover").path))
    }
}
