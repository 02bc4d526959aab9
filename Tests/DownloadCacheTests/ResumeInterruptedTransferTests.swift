import CacheTestSupport
import DownloadCache
import CacheStore
import Foundation
import HTTPCacheSemantics
import Synchronization
import Testing

/// RFC 9110 §14, §13.1.5 and RFC 9111 §3.3–3.4: an interrupted transfer keeps its verified bytes as a partial
/// entry, and the next request asks only for the rest with `Range` + `If-Range`, appending a 206 that continues
/// them, replacing them on a 200, and never joining bytes of two representations.
@Suite struct ResumeInterruptedTransferTests {
    static let size = 3_000_000

    /// Bytes of origin.py's generated body of `count` bytes (byte i is (i + shift) % 256).
    static func generated(_ count: Int, shift: Int = 0) -> Data {
        Data((0..<count).map { UInt8(($0 + shift) % 256) })
    }

    /// The partial entries kept for `path`.
    static func partials(_ h: Harness, _ path: String) -> [PartialEntryInfo] {
        h.cache.store.partials(forPrimaryKey: RFC9111.primaryKey(method: "GET", url: h.origin.url(path)))
    }

    /// The most body bytes one exchange reported receiving.
    final class ReceivedBytes: Sendable {
        let most = Mutex<Int64>(0)
        var value: Int64 { most.withLock { $0 } }
        var options: RequestOptions {
            var options = RequestOptions()
            options.progress = { progress in self.most.withLock { $0 = max($0, progress.bytesReceived) } }
            return options
        }
    }

    /// A first GET of `path` that the origin cuts after half the body: it fails, half is kept.
    static func interruptedByTruncation(_ h: Harness, _ path: String, etag: String? = "\"v1\"",
                                        lastModified: String? = nil) async throws -> Int64 {
        try await h.origin.configure(path: path, headers: [("Cache-Control", "max-age=600")], size: size, etag: etag,
                                     lastModified: lastModified, truncate: true)
        await #expect(throws: DownloadError.self) { try await h.get(path) }
        return partials(h, path).first?.verifiedBytes ?? 0
    }

    /// Expects `response` to be the whole generated body, stored as a complete entry with no partial left.
    static func expectWholeAndStored(_ h: Harness, _ path: String, _ response: CachedResponse, shift: Int = 0) throws {
        #expect(response.status == 200)
        #expect(response.bodySize == Int64(size))
        #expect(try response.data() == generated(size, shift: shift))
        #expect(h.storedVariants(path).count == 1)
        #expect(partials(h, path).isEmpty)
    }

    /// The validator the origin sends: a strong ETag, or a Last-Modified an hour before Date (RFC 9110 §8.8.2.2).
    enum Validator: String, CaseIterable, Sendable { case etag, lastModified }

    @Test(arguments: Validator.allCases)
    func aTruncatedTransferIsResumedWithOnlyTheRestFetched(validator: Validator) async throws {
        let etag: String? = validator == .etag ? "\"v1\"" : nil
        let lastModified: String? = validator == .lastModified ? HTTPDate.format(Date().addingTimeInterval(-3600)) : nil
        try await withHarness { h in
            let kept = try await Self.interruptedByTruncation(h, "/t", etag: etag, lastModified: lastModified)
            #expect(kept == Int64(Self.size / 2))
            #expect(Self.partials(h, "/t").first?.isInProgress == false)
            try await h.origin.configure(path: "/t", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         etag: etag, lastModified: lastModified)
            let received = ReceivedBytes()
            let whole = try await h.get("/t", received.options)
            try Self.expectWholeAndStored(h, "/t", whole)
            #expect(received.value == Int64(Self.size) - kept)  // only the rest crossed the network
            let hits = try await h.hits("/t")
            #expect(hits.total == 2 && hits.ranged == 1 && hits.partial == 1)
            #expect(whole.headers.first("Content-Range") == nil)
            #expect(whole.headers.first("Content-Length") == String(Self.size))
            // Stored as a normal complete response: the next request is a hit, checksum verified.
            let hit = try await h.get("/t")
            #expect(hit.source == .cache)
            #expect(try hit.data() == Self.generated(Self.size))
            #expect(h.cache.verify(repair: false).problems.isEmpty)
        }
    }

    @Test func aResumedTransferThatIsCutAgainKeepsWhatItAdded() async throws {
        try await withHarness { h in
            let first = try await Self.interruptedByTruncation(h, "/twice")
            #expect(first == Int64(Self.size / 2))
            // The origin still cuts every answer in half: the 206 for the second half delivers a quarter.
            await #expect(throws: DownloadError.self) { try await h.get("/twice") }
            let second = Self.partials(h, "/twice").first?.verifiedBytes ?? 0
            #expect(second == first + (Int64(Self.size) - first) / 2)
            try await h.origin.configure(path: "/twice", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         etag: "\"v1\"")
            let received = ReceivedBytes()
            try Self.expectWholeAndStored(h, "/twice", try await h.get("/twice", received.options))
            #expect(received.value == Int64(Self.size) - second)
            let hits = try await h.hits("/twice")
            #expect(hits.total == 3 && hits.ranged == 2 && hits.partial == 2)
        }
    }

    @Test func aTimedOutTransferIsResumed() async throws {
        try await withHarness { h in
            // The origin sends a third of the body unpaced, then holds the rest until it is configured again: the
            // 1 s limit always comes before the body's end, however loaded the machine.
            try await h.origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         etag: "\"v1\"", holdAfter: Self.size / 3)
            var options = RequestOptions()
            options.timeout = 1
            await #expect(throws: DownloadError.self) { try await h.get("/slow", options) }
            let kept = Self.partials(h, "/slow").first?.verifiedBytes ?? 0
            #expect(kept > 0 && kept < Int64(Self.size))
            try await h.origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         etag: "\"v1\"")
            let received = ReceivedBytes()
            try Self.expectWholeAndStored(h, "/slow", try await h.get("/slow", received.options))
            #expect(received.value == Int64(Self.size) - kept)
        }
    }

    @Test func aCancelledTransferIsResumed() async throws {
        try await withHarness { h in
            // The origin holds the body after a third of it until it is configured again, so the cancel (from the
            // progress callback once 300,000 bytes arrived) always comes before the end: no timing involved.
            try await h.origin.configure(path: "/c", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         etag: "\"v1\"", holdAfter: Self.size / 3)
            let received = ReceivedBytes()
            let running = Mutex<Task<CachedResponse, any Error>?>(nil)
            var options = received.options
            let counting = options.progress
            options.progress = { progress in
                counting?(progress)
                if progress.bytesReceived >= 300_000 { running.withLock { $0?.cancel() } }
            }
            let task = Task { [options] in try await h.get("/c", options) }
            running.withLock { $0 = task }
            if received.value >= 300_000 { task.cancel() }
            let outcome = await task.result
            #expect(throws: DownloadError.self) { try outcome.get() }
            let kept = Self.partials(h, "/c").first?.verifiedBytes ?? 0
            #expect(kept >= 300_000 && kept < Int64(Self.size))
            try await h.origin.configure(path: "/c", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         etag: "\"v1\"")
            let rest = ReceivedBytes()
            try Self.expectWholeAndStored(h, "/c", try await h.get("/c", rest.options))
            #expect(rest.value == Int64(Self.size) - kept)
        }
    }

    @Test func aResumeAnsweredWith200ReplacesTheKeptBytes() async throws {
        try await withHarness { h in
            _ = try await Self.interruptedByTruncation(h, "/i")
            try await h.origin.configure(path: "/i", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         etag: "\"v1\"", rangeMode: .ignore)
            try Self.expectWholeAndStored(h, "/i", try await h.get("/i"))
            let hits = try await h.hits("/i")
            #expect(hits.total == 2 && hits.ranged == 1 && hits.partial == 0)
        }
    }

    @Test func a206StartingEarlierIsCombinedOverTheOverlap() async throws {
        try await withHarness { h in
            let kept = try await Self.interruptedByTruncation(h, "/e")
            try await h.origin.configure(path: "/e", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         etag: "\"v1\"", rangeMode: .early, rangeEarly: 5_000)
            let received = ReceivedBytes()
            try Self.expectWholeAndStored(h, "/e", try await h.get("/e", received.options))
            #expect(received.value == Int64(Self.size) - kept + 5_000)
            #expect(try await h.hits("/e").total == 2)
        }
    }

    @Test func aBodyCapOfExactlyTheBodysSizeLetsAnEarly206Through() async throws {
        try await withHarness({ $0.maxResponseBodyBytes = Int64(Self.size) }) { h in
            _ = try await Self.interruptedByTruncation(h, "/cap")
            // The 206 starts 5,000 bytes before the held count: the whole body is still exactly the cap.
            try await h.origin.configure(path: "/cap", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         etag: "\"v1\"", rangeMode: .early, rangeEarly: 5_000)
            try Self.expectWholeAndStored(h, "/cap", try await h.get("/cap"))
        }
    }

    @Test func a206RepeatingTheHeldBytesDifferentlyIsNeverJoined() async throws {
        try await withHarness { h in
            let kept = try await Self.interruptedByTruncation(h, "/lie")
            #expect(kept > 5_000)
            // The same ETag, other bytes (shifted by one from the second request on): an early 206's overlap
            // differs from the bytes held, so they are another version and nothing of it is written or joined.
            try await h.origin.configure(path: "/lie", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         etags: ["\"v1\"", "\"v1\""], rangeMode: .early, rangeEarly: 5_000)
            await #expect(throws: DownloadError.self) { try await h.get("/lie") }
            #expect(h.storedVariants("/lie").isEmpty)
            #expect(Self.partials(h, "/lie").isEmpty)
            try Self.expectWholeAndStored(h, "/lie", try await h.get("/lie"), shift: 1)
            let hits = try await h.hits("/lie")
            #expect(hits.total == 3 && hits.ranged == 1)  // cut, the refused 206, the whole 200
        }
    }

    @Test(arguments: [OriginServer.RangeMode.wrongTotal, .noContentRange])
    func a206ThatCannotBeCombinedIsThrownAwayAndTheWholeFetched(mode: OriginServer.RangeMode) async throws {
        try await withHarness { h in
            _ = try await Self.interruptedByTruncation(h, "/w")
            try await h.origin.configure(path: "/w", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         etag: "\"v1\"", rangeMode: mode)
            try Self.expectWholeAndStored(h, "/w", try await h.get("/w"))
            let hits = try await h.hits("/w")
            #expect(hits.total == 3 && hits.ranged == 1)  // cut, the refused 206, the whole 200
        }
    }

    @Test func aChangedRepresentationIsFetchedWholeNeverSpliced() async throws {
        try await withHarness { h in
            // The first request sees "v1"; every later one "v2" with different bytes: If-Range fails, a 200 comes.
            try await h.origin.configure(path: "/v", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         truncate: true, etags: ["\"v1\"", "\"v2\""])
            await #expect(throws: DownloadError.self) { try await h.get("/v") }
            #expect(Self.partials(h, "/v").first?.verifiedBytes == Int64(Self.size / 2))
            try await h.origin.configure(path: "/v", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         etags: ["\"v1\"", "\"v2\""])
            let whole = try await h.get("/v")
            try Self.expectWholeAndStored(h, "/v", whole, shift: 1)
            #expect(whole.headers.first("ETag") == "\"v2\"")
            #expect(try await h.hits("/v").partial == 0)
        }
    }

    @Test func aWeakValidatorNeverResumes() async throws {
        try await withHarness { h in
            let kept = try await Self.interruptedByTruncation(h, "/weak", etag: "W/\"v1\"")
            #expect(kept == 0)
            #expect(Self.partials(h, "/weak").isEmpty)
            try await h.origin.configure(path: "/weak", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                         etag: "W/\"v1\"")
            try Self.expectWholeAndStored(h, "/weak", try await h.get("/weak"))
            #expect(try await h.hits("/weak").ranged == 0)
        }
    }

    @Test func noValidatorNeverResumes() async throws {
        try await withHarness { h in
            let kept = try await Self.interruptedByTruncation(h, "/none", etag: nil)
            #expect(kept == 0)
            #expect(Self.partials(h, "/none").isEmpty)
        }
    }

    @Test func aBodyUnder1MiBIsNotKeptAsAPartial() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/small", headers: [("Cache-Control", "max-age=600")], size: 600_000,
                                         etag: "\"v1\"", truncate: true)
            await #expect(throws: DownloadError.self) { try await h.get("/small") }
            #expect(Self.partials(h, "/small").isEmpty)
        }
    }

    @Test func aNoStoreResponseKeepsNoPartial() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/ns", headers: [("Cache-Control", "no-store")], size: Self.size,
                                         etag: "\"v1\"", truncate: true)
            await #expect(throws: DownloadError.self) { try await h.get("/ns") }
            #expect(Self.partials(h, "/ns").isEmpty)
            let tmp = h.cache.directoryURL.appendingPathComponent("tmp").path
            #expect(try FileManager.default.contentsOfDirectory(atPath: tmp).isEmpty)
        }
    }
}
