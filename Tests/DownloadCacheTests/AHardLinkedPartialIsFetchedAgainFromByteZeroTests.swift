import CacheTestSupport
import DownloadCache
import CacheStore
import Foundation
import HTTPCacheSemantics
import Testing

/// A hard link planted in `tmp/` over the file of an interrupted transfer's partial body (by a process with write
/// access to the cache directory) must never have the cache cut or extend the other file: the next request drops
/// the partial and downloads the whole body again, from byte 0, and the other file is unchanged.
@Suite struct AHardLinkedPartialIsFetchedAgainFromByteZeroTests {
    @Test func theLinkedFileIsUntouchedAndTheBodyIsFetchedWhole() async throws {
        try await withHarness { h in
            let size = ResumeInterruptedTransferTests.size
            let kept = try await ResumeInterruptedTransferTests.interruptedByTruncation(h, "/big")
            #expect(kept == Int64(size / 2))
            let tmp = h.cache.store.directoryURL.appendingPathComponent("tmp")
            let names = try FileManager.default.contentsOfDirectory(atPath: tmp.path)
            let name = try #require(names.count == 1 ? names.first : nil, "\(names)")
            let partial = tmp.appendingPathComponent(name)
            // The other file begins with the partial's own bytes (its checksum passes) and goes on past them (a
            // cut to the verified prefix would shorten it).
            let outside = FileManager.default.temporaryDirectory.appendingPathComponent("outside-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: outside) }
            let target = outside.appendingPathComponent("bashrc")
            let precious = try Data(contentsOf: partial).prefix(Int(kept)) + Data(repeating: 0x78, count: 3_000_000)
            try precious.write(to: target)
            try FileManager.default.removeItem(at: partial)
            #expect(link(target.path, partial.path) == 0)

            try await h.origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: size,
                                         etag: "\"v1\"")
            let whole = try await h.get("/big")
            try ResumeInterruptedTransferTests.expectWholeAndStored(h, "/big", whole)
            let hits = try await h.hits("/big")
            #expect(hits.total == 2 && hits.ranged == 0)  // fetched again from byte 0, no Range
            #expect(try Data(contentsOf: target) == precious)
            var info = stat()
            #expect(stat(target.path, &info) == 0 && info.st_nlink == 1)
        }
    }
}
