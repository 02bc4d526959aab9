import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// Bodies: truncation is never stored, large bodies stream to a file with bounded memory.
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

    @Test func largeBodyStreamsToAFile() async throws {
        let size = 200_000_000
        // Above the default per-entry limit (1/8 of 1 GiB): raised so the body is stored.
        try await withHarness({ $0.maxEntryBytes = 256 << 20 }) { h in
            let response = try await h.get("/size/\(size)")
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
            let hit = try await h.get("/size/\(size)")
            #expect(hit.source == .cache && hit.bodySize == Int64(size))
        }
    }

    /// The memory bound is measured in a process of its own (`dlcache get`, its peak resident size from wait4):
    /// the test process's resident size also holds whatever the tests running beside this one allocate.
    @Test(.enabled(if: CrashIntegrationTests.dlcacheBinary != nil, "dlcache is not built next to the tests"))
    func largeBodyDownloadKeepsMemoryBounded() async throws {
        let binary = try #require(CrashIntegrationTests.dlcacheBinary)
        let size = 200_000_000
        try await withHarness { h in
            func peakResidentBytes(_ path: String, _ name: String) async throws -> Int64 {
                let root = h.directory.appendingPathComponent("\(name)-root").path
                let output = h.directory.appendingPathComponent("\(name).body").path
                let outcome = try await ChildProcess.run([binary.path, "get", h.origin.url(path).absoluteString,
                                                          "--cache-dir", root, "-o", output], timeout: .seconds(120))
                #expect(outcome.status == 0, "dlcache get \(path): \(outcome.errorOutput)")
                #expect((try FileManager.default.attributesOfItem(atPath: output)[.size] as? NSNumber)?.intValue
                        == Int(path.split(separator: "/").last ?? "") ?? -1)
                return try #require(outcome.peakResidentBytes)
            }
            let small = try await peakResidentBytes("/size/1000", "small")
            let large = try await peakResidentBytes("/size/\(size)", "large")
            let growth = large - small
            #expect(growth < 100_000_000, """
                a \(size / 1_000_000) MB download used \(growth / 1_000_000) MB more memory than a 1 KB one \
                (\(large / 1_000_000) MB vs \(small / 1_000_000) MB)
                """)
        }
    }
}
