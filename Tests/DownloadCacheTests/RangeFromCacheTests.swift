import CacheTestSupport
import DownloadCache
import CacheStore
import Foundation
import HTTPCacheSemantics
import Testing

/// RFC 9110 §14 / RFC 9111 §3.4: a single byte range is cut from a complete stored response (206 with
/// Content-Range, 416 when unsatisfiable) without asking the origin while the stored response is fresh; several
/// ranges, and ranges of URLs with nothing stored, go to the origin uncached.
@Suite struct RangeFromCacheTests {
    /// Bytes `first...last` of origin.py's generated body (byte i is i % 256).
    func generated(_ first: Int, _ last: Int, shift: Int = 0) -> Data {
        Data((first...last).map { UInt8(($0 + shift) % 256) })
    }

    func range(_ value: String, ifRange: String? = nil) -> HTTPHeaders {
        var headers = HTTPHeaders([("Range", value)])
        if let ifRange { headers.add("If-Range", ifRange) }
        return headers
    }

    @Test(arguments: [("bytes=0-0", 0, 0), ("bytes=100-199", 100, 199), ("bytes=9990-", 9990, 9999),
                      ("bytes=-10", 9990, 9999), ("bytes=5000-99999999999999999999", 5000, 9999), ("bytes=0-", 0, 9999)])
    func freshStoredResponseAnswersARangeWithoutTheOrigin(value: String, first: Int, last: Int) async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/f", headers: [("Cache-Control", "max-age=600")], size: 10_000, etag: "\"v1\"")
            let whole = try await h.get("/f")
            #expect(whole.status == 200 && whole.bodySize == 10_000)
            let part = try await h.get("/f", headers: range(value))
            #expect(part.status == 206)
            #expect(part.source == .cache)
            #expect(part.headers.first("Content-Range") == "bytes \(first)-\(last)/10000")
            #expect(part.headers.first("Content-Length") == "\(last - first + 1)")
            #expect(part.bodySize == Int64(last - first + 1))
            #expect(try part.data() == generated(first, last))
            #expect(try await h.hits("/f").total == 1)
            #expect(try await h.hits("/f").ranged == 0)
        }
    }

    @Test func largeFileBodyIsSlicedToo() async throws {
        // Above the in-memory limit the stored body is a file; a slice above the limit is a file the caller owns.
        try await withHarness({ $0.inMemoryBodyLimit = 1_024 }) { h in
            try await h.origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: 300_000)
            _ = try await h.get("/big")
            let small = try await h.get("/big", headers: range("bytes=1000-1099"))
            #expect(small.status == 206)
            #expect(try small.data() == generated(1000, 1099))
            let large = try await h.get("/big", headers: range("bytes=100000-"))
            #expect(large.status == 206 && large.bodySize == 200_000)
            guard case .file(let url) = large.body else {
                Issue.record("a 200,000-byte slice should be a file")
                return
            }
            #expect(url != large.storedBodyURL)
            #expect(try Data(contentsOf: url) == generated(100_000, 299_999))
            #expect(try await h.hits("/big").total == 1)
        }
    }

    @Test func unsatisfiableRangeIs416FromTheCache() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/u", headers: [("Cache-Control", "max-age=600")], size: 100)
            _ = try await h.get("/u")
            for value in ["bytes=100-", "bytes=-0", "bytes=500-600"] {
                let answer = try await h.get("/u", headers: range(value))
                #expect(answer.status == 416, "\(value)")
                #expect(answer.headers.first("Content-Range") == "bytes */100", "\(value)")
                #expect(answer.bodySize == 0, "\(value)")
                #expect(try answer.data().isEmpty, "\(value)")
            }
            #expect(try await h.hits("/u").total == 1)
        }
    }

    @Test func staleStoredResponseIsRevalidatedThenSliced() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/s", headers: [("Cache-Control", "max-age=10")], size: 1000, etag: "\"v1\"")
            _ = try await h.get("/s")
            try await h.advance(by: 60)
            let part = try await h.get("/s", headers: range("bytes=10-19"))
            #expect(part.status == 206 && part.source == .revalidated)
            #expect(try part.data() == generated(10, 19))
            let hits = try await h.hits("/s")
            #expect(hits.total == 2 && hits.notModified == 1 && hits.ranged == 0)
            // Freshened: the next range is a hit.
            _ = try await h.get("/s", headers: range("bytes=-1"))
            #expect(try await h.hits("/s").total == 2)
        }
    }

    @Test func changedRepresentationAfterStalenessIsSlicedFromTheNewBody() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/c", headers: [("Cache-Control", "max-age=10")], size: 1000,
                                         etags: ["\"v1\"", "\"v2\""])
            _ = try await h.get("/c")
            try await h.advance(by: 60)
            let part = try await h.get("/c", headers: range("bytes=0-9"))
            #expect(part.status == 206 && part.source == .network)
            #expect(part.headers.first("ETag") == "\"v2\"")
            #expect(try part.data() == generated(0, 9, shift: 1))
        }
    }

    @Test func ifRangeMismatchGivesTheWholeStoredResponse() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/i", headers: [("Cache-Control", "max-age=600")], size: 100, etag: "\"v1\"")
            _ = try await h.get("/i")
            let matched = try await h.get("/i", headers: range("bytes=0-9", ifRange: "\"v1\""))
            #expect(matched.status == 206)
            let other = try await h.get("/i", headers: range("bytes=0-9", ifRange: "\"v0\""))
            #expect(other.status == 200 && other.bodySize == 100 && other.source == .cache)
            #expect(try await h.hits("/i").total == 1)
        }
    }

    @Test func multipleRangesGoToTheOriginUncached() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/m", headers: [("Cache-Control", "max-age=600")], size: 100)
            _ = try await h.get("/m")
            let answer = try await h.get("/m", headers: range("bytes=0-1,5-6"))
            #expect(answer.source == .network)
            let hits = try await h.hits("/m")
            #expect(hits.total == 2 && hits.ranged == 1)
            #expect(h.storedVariants("/m").count == 1)
        }
    }

    @Test func rangeOfAnUnstoredURLGoesToTheOriginAndStoresNothing() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/n", headers: [("Cache-Control", "max-age=600")], size: 1000, etag: "\"v1\"")
            let part = try await h.get("/n", headers: range("bytes=10-19"))
            #expect(part.status == 206 && part.source == .network)
            #expect(part.headers.first("Content-Range") == "bytes 10-19/1000")
            #expect(try part.data() == generated(10, 19))
            #expect(h.storedVariants("/n").isEmpty)
            let hits = try await h.hits("/n")
            #expect(hits.ranged == 1 && hits.partial == 1)
        }
    }

    @Test func invalidRangeIsIgnoredAndAnsweredWhole() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/v", headers: [("Cache-Control", "max-age=600")], size: 100)
            _ = try await h.get("/v")
            let answer = try await h.get("/v", headers: range("bytes=5-3"))
            #expect(answer.status == 200 && answer.bodySize == 100 && answer.source == .cache)
            #expect(try await h.hits("/v").total == 1)
        }
    }

    /// The suite's `partial-use-headers` / `partial-use-stored-headers`: a range of a fresh stored 200 is cut from
    /// it (no origin request, so no newer fields exist) and carries the stored header fields.
    @Test func aRangeCutFromAStoredResponseKeepsItsHeaderFields() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/a", headers: [("Cache-Control", "max-age=3600"), ("A", "1")],
                                         body: "01234567890")
            _ = try await h.get("/a")
            let part = try await h.get("/a", headers: range("bytes=0-1"))
            #expect(part.status == 206 && part.source == .cache)
            #expect(part.text == "01")
            #expect(part.headers.values(for: "A") == ["1"])
            #expect(try await h.hits("/a").total == 1)
        }
    }
}
