import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// Every stored body is checked against its index row (size, crc32) before it is served: a damaged body file is a
/// miss, its entry is dropped and the body fetched again, in this instance and in any other.
@Suite struct StoredBodyVerificationTests {
    /// How a stored blob gets damaged on disk.
    enum Damage: String, CaseIterable, Sendable {
        case truncated, bitFlipped, emptied
    }

    /// Damages the file at `url` in place.
    static func damage(_ url: URL, _ kind: Damage) throws {
        let handle = try FileHandle(forUpdating: url)
        defer { try? handle.close() }
        switch kind {
        case .truncated: try handle.truncate(atOffset: 100_000)
        case .emptied: try handle.truncate(atOffset: 0)
        case .bitFlipped:
            try handle.seek(toOffset: 150_000)
            let original = try handle.read(upToCount: 4) ?? Data()
            try handle.seek(toOffset: 150_000)
            try handle.write(contentsOf: Data(original.map { $0 ^ 0xFF }))
        }
    }

    /// A file-backed stored body (above `inMemoryBodyLimit`) whose size or crc32 no longer matches
    /// the index is never served: the entry is dropped and the body fetched again.
    @Test(arguments: Damage.allCases)
    func damagedBlobServedByFileIsRefetched(_ kind: Damage) async throws {
        try await withHarness({ $0.inMemoryBodyLimit = 64 << 10 }) { h in
            let first = try await h.get("/size/300000")
            let blob = try #require(first.storedBodyURL)
            let hit = try await h.get("/size/300000")
            #expect(hit.source == .cache && hit.body == .file(blob))
            #expect(try await h.hits("/size/300000").total == 1)

            try Self.damage(blob, kind)
            let again = try await h.get("/size/300000")
            #expect(again.source == .network)
            #expect(try await h.hits("/size/300000").total == 2)
            let data = try again.data()
            #expect(data.count == 300_000 && data[150_001] == UInt8(150_001 % 256))
            // The refetched body is stored again and served (verified) from then on.
            let third = try await h.get("/size/300000")
            #expect(third.source == .cache)
            #expect(try third.data() == data)
            #expect(try await h.hits("/size/300000").total == 2)
        }
    }

    /// In a second process: damage after a verified hit in one instance is still caught by a new instance.
    @Test func damagedBlobIsCaughtByAnotherInstance() async throws {
        try await withHarness({ $0.inMemoryBodyLimit = 64 << 10 }) { h in
            let first = try await h.get("/size/300000")
            let blob = try #require(first.storedBodyURL)
            try Self.damage(blob, .bitFlipped)
            let other = try h.reopen()
            let response = try await other.response(for: CacheRequest(url: h.origin.url("/size/300000")))
            #expect(response.source == .network)
            #expect(try response.data()[150_000] == UInt8(150_000 % 256))
        }
    }
}
