import CacheTestSupport
import DownloadCache
import Foundation
import Synchronization
import Testing

/// Bodies: truncation is never stored, large bodies stream with bounded memory.
@Suite struct TransferIntegrationTests {
    @Test func truncatedBodyIsAnErrorAndIsNotStored() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/t", headers: [("Cache-Control", "max-age=60")], size: 200_000,
                                         truncate: true)
            do throws(DownloadError) {
                _ = try await h.get("/t")
                Issue.record("a truncated body must fail")
            } catch {
                #expect(error.code == .truncated)
            }
            #expect(h.storedVariants("/t").isEmpty)
            #expect(h.cache.store.statistics.entries == 0)
        }
    }

    @Test func truncatedTransferNeverReplacesAGoodEntry() async throws {
        // Not served stale instead (RFC 9111 §4.2.4 default), so the failure itself is seen.
        try await withHarness({ $0.servesStaleWhenDisconnected = false }) { h in
            try await h.origin.configure(path: "/g", headers: [("Cache-Control", "max-age=10")], body: "good body")
            _ = try await h.get("/g")
            let before = try #require(h.storedVariants("/g").first)
            try await h.advance(by: 60)
            try await h.origin.configure(path: "/g", headers: [("Cache-Control", "max-age=10")], size: 100_000,
                                         truncate: true)
            await #expect(throws: DownloadError.self) { _ = try await h.get("/g") }
            let after = try #require(h.storedVariants("/g").first)
            #expect(after.checksum == before.checksum && after.bodySize == before.bodySize)
            let cached = try await h.get("/g", RequestOptions(policy: .returnCacheDataDontLoad))
            #expect(cached.text == "good body")
        }
    }

    @Test func largeBodyStreamsToAFileWithBoundedMemory() async throws {
        let size = 200_000_000
        try await withHarness { h in
            let baseline = residentBytes()
            let peak = PeakMemory(baseline)
            let response = try await h.get("/size/\(size)", RequestOptions(progress: { _ in peak.sample() }))
            peak.sample()
            #expect(response.bodySize == Int64(size))
            guard case .file(let file) = response.body else {
                Issue.record("a body above inMemoryBodyLimit must be returned as a file")
                return
            }
            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            #expect((attributes[.size] as? NSNumber)?.int64Value == Int64(size))
            #expect(response.storedBodyURL == file)
            // Spot-check content: byte i of a generated body is i % 256.
            let handle = try FileHandle(forReadingFrom: file)
            try handle.seek(toOffset: 123_456_789)
            let bytes = try handle.read(upToCount: 4) ?? Data()
            try handle.close()
            #expect(Array(bytes) == (0..<4).map { UInt8((123_456_789 + $0) % 256) })
            let growth = peak.maximum - baseline
            #expect(growth < 100_000_000, "resident memory grew by \(growth / 1_000_000) MB for a \(size / 1_000_000) MB body")
            let hit = try await h.get("/size/\(size)")
            #expect(hit.source == .cache && hit.bodySize == Int64(size))
        }
    }
}

/// The largest resident set size sampled.
final class PeakMemory: Sendable {
    private let value: Mutex<Int64>
    init(_ start: Int64) { value = Mutex(start) }
    func sample() {
        let now = residentBytes()
        value.withLock { $0 = max($0, now) }
    }
    var maximum: Int64 { value.withLock { $0 } }
}
