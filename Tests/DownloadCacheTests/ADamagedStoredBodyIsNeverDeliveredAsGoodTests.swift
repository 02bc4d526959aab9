import CacheStore
import CacheTestSupport
@testable import DownloadCache
import Foundation
import HTTPCacheSemantics
import Testing

/// `RequestOptions.storedBodyCheck = .whileStreaming`: a stored body is streamed while its crc32 is checked on
/// another thread, and the stream's end comes only with the verdict. An intact body ends normally; a body damaged
/// on disk after it was stored makes the stream and `response()` throw `.storedBodyDamaged` (never a normal end),
/// removes the entry, and the next request fetches the body from the origin.
@Suite struct ADamagedStoredBodyIsNeverDeliveredAsGoodTests {
    static let size = 3_000_000

    static var checkingWhileStreaming: RequestOptions {
        var options = RequestOptions()
        options.storedBodyCheck = .whileStreaming
        return options
    }

    @Test func anIntactBodyEndsNormallyAndADamagedOneNeverDoes() async throws {
        try await withHarness({ $0.inMemoryBodyLimit = 1 << 20 }) { h in
            try await h.origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: Self.size)
            _ = try await h.get("/big")
            let key = try #require(h.storedVariants("/big").first).key
            let blob = try #require(h.cache.store.bodyFileURL(for: key, refreshingAccessTime: false))
            let request = CacheRequest(url: h.origin.url("/big"))

            // Another instance (as a new process: it has verified nothing): streamed while checked, ends normally.
            let second = try h.reopen()
            let good = second.stream(request, options: Self.checkingWhileStreaming)
            let (bytes, _, _) = try await StreamRegionsCopyTheWholeBodyTests.copyRegions(good, maxBytes: 1 << 20)
            #expect(bytes == BodyStreamsWhileItIsStoredTests.generated(Self.size))
            #expect(try await good.response().source == .cache)

            // Damaged on disk after it was stored: the stream never ends as if the bytes were the body.
            try FileDamage.flipByte(of: blob, at: 2_000_000)
            let third = try h.reopen()
            let bad = third.stream(request, options: Self.checkingWhileStreaming)
            let (delivered, failure) = await BodyStreamsWhileItIsStoredTests.drain(bad)
            #expect(failure?.code == .storedBodyDamaged, "\(String(describing: failure))")
            #expect(delivered.count <= Self.size)
            var responseFailure: DownloadError?
            do throws(DownloadError) { _ = try await bad.response() } catch { responseFailure = error }
            #expect(responseFailure?.code == .storedBodyDamaged)
            #expect(third.store.variants(forPrimaryKey: RFC9111.primaryKey(method: "GET", url: request.url)).isEmpty)
            #expect(!FileManager.default.fileExists(atPath: blob.path))

            // Asked again: from the origin, the right bytes.
            let again = try await third.response(for: request)
            #expect(again.source == .network)
            #expect(try again.data() == BodyStreamsWhileItIsStoredTests.generated(Self.size))
            #expect(try await h.hits("/big").total == 2)
        }
    }

    @Test func theDefaultChecksBeforeTheFirstByte() async throws {
        try await withHarness({ $0.inMemoryBodyLimit = 1 << 20 }) { h in
            try await h.origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: Self.size)
            _ = try await h.get("/big")
            let key = try #require(h.storedVariants("/big").first).key
            let blob = try #require(h.cache.store.bodyFileURL(for: key, refreshingAccessTime: false))
            try FileDamage.flipByte(of: blob, at: 10)
            // Checked before serving: the damaged entry is a miss, the stream carries the origin's bytes.
            let stream = try h.reopen().stream(CacheRequest(url: h.origin.url("/big")))
            let (bytes, failure) = await BodyStreamsWhileItIsStoredTests.drain(stream)
            #expect(failure == nil)
            #expect(bytes == BodyStreamsWhileItIsStoredTests.generated(Self.size))
            #expect(try await stream.response().source == .network)
            #expect(try await h.hits("/big").total == 2)
        }
    }
}
