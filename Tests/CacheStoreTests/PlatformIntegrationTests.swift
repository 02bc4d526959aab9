import Foundation
import Testing
@testable import CacheStore

/// The platform defaults of the store: where caches live, the directory attributes at open, and the memory
/// tier's answers to memory pressure (drop everything, or keep the most recent part).
@Suite struct PlatformIntegrationTests {
    #if canImport(Darwin)
    @Test func cachesLiveInTheAppsCachesDirectory() throws {
        let caches = try #require(FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first)
        let directory = PlatformIntegration.cachesDirectory(environment: ["XDG_CACHE_HOME": "/elsewhere"])
        #expect(directory.path.hasPrefix(caches.path))
    }
    #else
    @Test func cachesFollowXDGWhenItIsAbsolute() {
        #expect(PlatformIntegration.cachesDirectory(environment: ["XDG_CACHE_HOME": "/var/cache/me"]).path == "/var/cache/me")
        let home = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache").path
        #expect(PlatformIntegration.cachesDirectory(environment: ["XDG_CACHE_HOME": "relative/dir"]).path == home)
        #expect(PlatformIntegration.cachesDirectory(environment: [:]).path == home)
    }

    @Test func theTemporaryDirectoryIsAnAbsoluteTMPDIRElseTmp() {
        #expect(PlatformIntegration.temporaryDirectory(environment: ["TMPDIR": "/var/tmp/me/"]) == "/var/tmp/me")
        #expect(PlatformIntegration.temporaryDirectory(environment: ["TMPDIR": ""]) == "/tmp")
        #expect(PlatformIntegration.temporaryDirectory(environment: ["TMPDIR": "relative"]) == "/tmp")
        #expect(PlatformIntegration.temporaryDirectory(environment: [:]) == "/tmp")
        #expect(PlatformIntegration.temporaryDirectory(environment: ["TMPDIR": "/"]) == "/")
    }
    #endif

    @Test(arguments: [nil] + FileProtection.allCases.map { Optional($0) })
    func aStoreOpensAndWorksWithEveryProtectionClass(protection: FileProtection?) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var config = testConfiguration(dir, clock: TestClock())
        config.fileProtection = protection
        config.excludedFromBackup = true
        let logs = LogSink()
        config.logger = { logs.append($0) }
        let store = try CacheStore(configuration: config)
        try store.store(Data("body".utf8), metadata: Data(), for: StoreKey(primary: "k"))
        #expect(store.entry(for: StoreKey(primary: "k"))?.body == Data("body".utf8))
        // Setting the attributes never fails where the platform has them, and is silent where it has none.
        #expect(!logs.lines.contains { $0.contains("data protection") || $0.contains("from backups") })
    }

    @Test func droppingTheMemoryTierKeepsEverythingOnDisk() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try CacheStore(configuration: testConfiguration(dir, clock: TestClock()))
        for i in 0..<4 { try store.store(Data(repeating: UInt8(i), count: 500), metadata: Data(), for: StoreKey(primary: "\(i)")) }
        #expect(store.statistics.memoryEntries == 4)
        #expect(store.dropMemoryTier() == 4)
        #expect(store.statistics.memoryEntries == 0 && store.statistics.memoryBytes == 0)
        for i in 0..<4 { #expect(store.entry(for: StoreKey(primary: "\(i)"))?.body == Data(repeating: UInt8(i), count: 500)) }
    }

    @Test func trimmingTheMemoryTierEvictsTheLeastRecentlyUsedFirst() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var config = testConfiguration(dir, clock: TestClock())
        config.maxMemoryBytes = 4_000
        let store = try CacheStore(configuration: config)
        for i in 0..<6 { try store.store(Data(repeating: UInt8(i), count: 500), metadata: Data(), for: StoreKey(primary: "\(i)")) }
        #expect(store.statistics.memoryEntries == 6)
        #expect(store.trimMemoryTier(toFraction: 0.25) == 4)
        #expect(store.statistics.memoryBytes <= 1_000 && store.statistics.memoryEntries == 2)
        let hits = store.statistics.memoryHits
        _ = store.entry(for: StoreKey(primary: "5"))
        _ = store.entry(for: StoreKey(primary: "4"))
        #expect(store.statistics.memoryHits == hits + 2)
        #expect(store.trimMemoryTier(toFraction: .nan) == 2)
        #expect(store.statistics.memoryEntries == 0)
    }
}
