import CacheStore
import CacheTestSupport
import DownloadCache
import Foundation
import HTTPCacheSemantics
import Synchronization
import Testing

/// What an origin sends may lie about its own length. A resumed transfer is bounded like a fresh one: a 206
/// answering `Range` is cut at the end of the range its `Content-Range` encloses (the bytes past it never reach
/// the partial's file), and a `Content-Length` larger than the disk can take never lifts the transfer cap. A
/// second transfer of the same URL never takes the partial a live transfer is writing.
@Suite struct HostileAnswersNeverOutgrowTheirLimitsTests {
    /// Bytes of every file in the store's `tmp/` together.
    static func tmpBytes(_ h: Harness) throws -> Int64 {
        let tmp = h.cache.store.directoryURL.appendingPathComponent("tmp")
        return try FileManager.default.contentsOfDirectory(atPath: tmp.path).reduce(0) { sum, name in
            let attributes = try FileManager.default.attributesOfItem(atPath: tmp.appendingPathComponent(name).path)
            return sum + ((attributes[.size] as? NSNumber)?.int64Value ?? 0)
        }
    }

    @Test func a206GoingOnPastItsRangeIsCutAtTheRangeEnd() async throws {
        let size = ResumeInterruptedTransferTests.size
        try await withHarness { h in
            let kept = try await ResumeInterruptedTransferTests.interruptedByTruncation(h, "/o")
            #expect(kept > 0)
            // A correct Content-Range, no Content-Length, then 64 MiB more than the range holds.
            try await h.origin.configure(path: "/o", headers: [("Cache-Control", "max-age=600")], size: size,
                                         etag: "\"v1\"", rangeMode: .overrun)
            var caught: DownloadError?
            do throws(DownloadError) {
                _ = try await h.get("/o")
            } catch {
                caught = error
            }
            #expect(caught?.code == .invalidResponse, "\(String(describing: caught))")
            #expect(caught?.detail.contains("Content-Range") == true, "\(String(describing: caught))")
            #expect(try Self.tmpBytes(h) <= Int64(size), "nothing past the range's end was written")
            for partial in ResumeInterruptedTransferTests.partials(h, "/o") {
                #expect(partial.verifiedBytes <= Int64(size))
            }
            #expect(h.storedVariants("/o").isEmpty)
            // The next request is answered correctly.
            try await h.origin.configure(path: "/o", headers: [("Cache-Control", "max-age=600")], size: size,
                                         etag: "\"v1\"")
            let whole = try await h.get("/o")
            #expect(try whole.data() == ResumeInterruptedTransferTests.generated(size))
        }
    }

    @Test func aContentLengthOverTheFreeSpaceLeavesTheTransferCapInForce() async throws {
        let cap: Int64 = 1 << 20
        try await withHarness({ $0.maxTransferBytes = cap; $0.inMemoryBodyLimit = 64 << 10 }) { h in
            // 10^15 bytes announced (more than any disk here has free), 3 MB sent, then the connection closed.
            try await h.origin.configure(path: "/lie", headers: [("Cache-Control", "max-age=600")], size: 3_000_000,
                                         claimedLength: 1_000_000_000_000_000)
            var caught: DownloadError?
            do throws(DownloadError) {
                _ = try await h.get("/lie", RequestOptions(writeToCache: false, timeout: 60))
            } catch {
                caught = error
            }
            #expect(caught?.code == .bodyTooLarge, "\(String(describing: caught))")
            #expect(try Self.tmpBytes(h) == 0)
        }
    }

    @Test(arguments: [RequestOptions(policy: .reload), RequestOptions(readFromCache: false)])
    func aReloadDuringAnotherTransferLeavesItsPartialAlone(second: RequestOptions) async throws {
        let size = 3_000_000
        try await withHarness { h in
            // The origin holds every response after a third of the body until released: the first transfer is
            // still being written when the second one's request reaches the origin, however loaded the machine.
            try await h.origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], size: size,
                                         etag: "\"v1\"", holdAfter: size / 3)
            let first = Task { try await h.get("/slow") }
            let deadline = Date().addingTimeInterval(30)
            while ResumeInterruptedTransferTests.partials(h, "/slow").first?.isInProgress != true, Date() < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(ResumeInterruptedTransferTests.partials(h, "/slow").first?.isInProgress == true)
            let reload = Task { try await h.get("/slow", second) }
            while try await h.hits("/slow").total < 2, Date() < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            try await h.origin.release(path: "/slow")
            let reloaded = try await reload.value
            #expect(try reloaded.data() == ResumeInterruptedTransferTests.generated(size))
            let answer = try await first.value
            #expect(answer.status == 200)
            #expect(try answer.data() == ResumeInterruptedTransferTests.generated(size))
            #expect(try await h.hits("/slow").total == 2)
        }
    }
}
