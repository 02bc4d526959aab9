import CacheStore
import CacheTestSupport
import DownloadCache
import Foundation
import Testing

/// `maxEntryBytes`: a response over the per-entry limit is delivered whole but not stored, and nothing already
/// stored is evicted for it (one eighth of `maxDiskBytes` unless set).
@Suite struct EntryByteLimitTests {
    @Test func defaultLimitIsAnEighthOfMaxDiskBytes() {
        var configuration = DownloadCache.Configuration(directory: URL(fileURLWithPath: "/nonexistent"))
        #expect(configuration.storeConfiguration.entryByteLimit == Int64(1 << 30) / 8)
        configuration.maxDiskBytes = 8_000
        #expect(configuration.storeConfiguration.entryByteLimit == 1_000)
        configuration.maxEntryBytes = 50_000          // never above maxDiskBytes
        #expect(configuration.storeConfiguration.entryByteLimit == 8_000)
        configuration.maxEntryBytes = 10
        #expect(configuration.storeConfiguration.entryByteLimit == 10)
        configuration.maxDiskBytes = nil
        configuration.maxEntryBytes = nil
        #expect(configuration.storeConfiguration.entryByteLimit == nil)
    }

    @Test(arguments: [20_000, 300_000])   // an inline-sized body held in memory, and a file-backed one
    func bodyOverTheLimitIsDeliveredNotStoredAndEvictsNothing(size: Int) async throws {
        try await withHarness({ $0.maxDiskBytes = 1 << 20; $0.maxEntryBytes = 10_000; $0.inMemoryBodyLimit = 64 << 10 }) { h in
            for path in ["/s1", "/s2"] {
                try await h.origin.configure(path: path, headers: [("Cache-Control", "max-age=600")], size: 5_000)
                _ = try await h.get(path)
            }
            try await h.origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: size)
            let big = try await h.get("/big")
            #expect(big.status == 200 && big.bodySize == Int64(size))
            #expect(try big.data() == Data((0..<size).map { UInt8($0 % 256) }))
            #expect(big.reason.contains("entry limit"))
            #expect(h.storedVariants("/big").isEmpty)
            #expect(h.storedVariants("/s1").count == 1 && h.storedVariants("/s2").count == 1)
            _ = try await h.get("/big")
            #expect(try await h.hits("/big").total == 2)
            #expect(try await h.hits("/s1").total == 1)
        }
    }

    @Test func storeRefusesAnEntryOverTheLimitBeforeWriting() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-entry-limit-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = CacheStore.Configuration(directory: directory)
        configuration.maxEntryBytes = 100
        configuration.logger = { _ in }
        let store = try CacheStore(configuration: configuration)
        let key = StoreKey(primary: "GET https://example.com/a", variant: "")
        #expect(throws: CacheStoreError.self) { try store.store(Data(count: 101), metadata: Data(), for: key) }
        do {
            try store.store(Data(count: 101), metadata: Data(), for: key)
        } catch {
            #expect(error.code == .entryTooLarge)
        }
        try store.store(Data(count: 100), metadata: Data(), for: key)
        #expect(store.info(for: key)?.bodySize == 100)
    }
}
