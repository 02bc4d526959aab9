import CacheStore
import CacheTestSupport
import DownloadCache
import Foundation
import Testing

/// `maxTransferBytes`: one transfer never writes more than the limit to the cache's disk. An endless body fails
/// with `.bodyTooLarge` once over it, nothing is stored and nothing is left in the store's `tmp/`; a body under it
/// (even one larger than `maxDiskBytes`) is delivered.
@Suite struct TransferByteLimitTests {
    static let limit: Int64 = 1 << 20

    @Test(arguments: TransportKind.available)
    func anEndlessBodyFailsOnceOverTheLimitAndLeavesNothing(kind: TransportKind) async throws {
        try await withHarness({ $0.maxTransferBytes = Self.limit; $0.transport = kind.make() }) { h in
            // Paced at 8 MB/s (the limit is reached in about 0.13 s): unpaced, FoundationNetworking's URLSession
            // queues the body for its delegate faster than it is consumed and took this test process to 8.8 GB
            // in 43 s before the cancellation took effect.
            try await h.origin.configure(path: "/endless", headers: [("Cache-Control", "max-age=600")],
                                         rate: 8 << 20, endless: true)
            var caught: DownloadError?
            do throws(DownloadError) {
                _ = try await h.get("/endless", RequestOptions(timeout: 60))
            } catch {
                caught = error
            }
            let error = try #require(caught, "an endless body was answered")
            #expect(error.code == .bodyTooLarge, "\(error)")
            #expect(error.transportError == .bodyTooLarge(limit: Self.limit))
            #expect(error.detail.contains("\(Self.limit)-byte limit"), "\(error.detail)")
            #expect(h.storedVariants("/endless").isEmpty)
            let tmp = h.cache.store.directoryURL.appendingPathComponent("tmp")
            #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path).isEmpty)
        }
    }

    @Test func aBodyUnderTheLimitButOverTheCacheIsDelivered() async throws {
        try await withHarness({ $0.maxTransferBytes = Self.limit; $0.maxDiskBytes = 100_000 }) { h in
            let size = 600_000
            try await h.origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: size)
            let big = try await h.get("/big")
            #expect(big.status == 200 && big.bodySize == Int64(size))
            #expect(try big.data() == Data((0..<size).map { UInt8($0 % 256) }))
            #expect(h.storedVariants("/big").isEmpty)
        }
    }

    @Test func theDefaultLimitIsFourGibibytes() {
        let configuration = DownloadCache.Configuration(directory: URL(fileURLWithPath: "/nonexistent"))
        #expect(configuration.maxTransferBytes == 4 << 30)
    }
}
