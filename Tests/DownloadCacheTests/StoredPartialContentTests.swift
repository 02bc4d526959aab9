import CacheTestSupport
import DownloadCache
import CacheStore
import Foundation
import HTTPCacheSemantics
import Testing

/// RFC 9111 §3.3–3.4: the origin's 206 to a caller's range request is kept as partial content when it starts at
/// byte 0 or continues what is kept, and pieces that reach the complete length become a stored 200.
@Suite struct StoredPartialContentTests {
    static func generated(_ first: Int, _ last: Int) -> Data { Data((first...last).map { UInt8($0 % 256) }) }

    static func range(_ value: String) -> HTTPHeaders { HTTPHeaders([("Range", value)]) }

    static func partials(_ h: Harness, _ path: String) -> [PartialEntryInfo] {
        h.cache.store.partials(forPrimaryKey: RFC9111.primaryKey(method: "GET", url: h.origin.url(path)))
    }

    @Test func contiguousPiecesFromTheStartCombineIntoAStoredResponse() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/p", headers: [("Cache-Control", "max-age=600"), ("X-Origin", "one")],
                                         size: 10_000, etag: "\"v1\"")
            let first = try await h.get("/p", headers: Self.range("bytes=0-3999"))
            #expect(first.status == 206)
            #expect(try first.data() == Self.generated(0, 3999))
            #expect(Self.partials(h, "/p").first?.verifiedBytes == 4_000)
            #expect(h.storedVariants("/p").isEmpty)
            // Overlapping the kept bytes: the overlap is skipped, the rest appended, and the whole is complete.
            let second = try await h.get("/p", headers: Self.range("bytes=3000-"))
            #expect(second.status == 206)
            #expect(try second.data() == Self.generated(3000, 9999))
            #expect(Self.partials(h, "/p").isEmpty)
            #expect(h.storedVariants("/p").count == 1)
            let whole = try await h.get("/p")
            #expect(whole.source == .cache)
            #expect(whole.status == 200)
            #expect(try whole.data() == Self.generated(0, 9999))
            #expect(whole.headers.first("Content-Length") == "10000")
            #expect(whole.headers.first("Content-Range") == nil)
            #expect(whole.headers.first("X-Origin") == "one")
            #expect(try await h.hits("/p").total == 2)
            // And ranges are now cut from the complete stored body.
            let part = try await h.get("/p", headers: Self.range("bytes=100-199"))
            #expect(part.status == 206 && part.source == .cache)
            #expect(try part.data() == Self.generated(100, 199))
        }
    }

    @Test func aPieceReachedThroughARedirectIsNotKeptUnderTheRedirectingURL() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/hop", status: 302, headers: [("Cache-Control", "no-store")], body: "",
                                         redirect: "/elsewhere")
            try await h.origin.configure(path: "/elsewhere", headers: [("Cache-Control", "max-age=600")], size: 5_000,
                                         etag: "\"e1\"")
            let piece = try await h.get("/hop", headers: Self.range("bytes=0-"))
            #expect(piece.status == 206 && piece.redirects.count == 1)
            #expect(try piece.data() == Self.generated(0, 4999))
            // /elsewhere's bytes are not /hop's: /hop keeps nothing, and the next GET of /hop asks /hop again.
            #expect(h.storedVariants("/hop").isEmpty)
            #expect(Self.partials(h, "/hop").isEmpty)
            try await h.origin.configure(path: "/hop", headers: [("Cache-Control", "max-age=600")], body: "hop itself")
            let again = try await h.get("/hop")
            #expect(again.text == "hop itself" && again.source == .network)
        }
    }

    @Test func aPlainGetAfterAPieceAsksOnlyForTheRest() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/r", headers: [("Cache-Control", "max-age=600")], size: 5_000, etag: "\"v1\"")
            _ = try await h.get("/r", headers: Self.range("bytes=0-999"))
            let whole = try await h.get("/r")
            #expect(whole.status == 200)
            #expect(try whole.data() == Self.generated(0, 4999))
            let hits = try await h.hits("/r")
            #expect(hits.total == 2 && hits.ranged == 2 && hits.partial == 2)
            #expect(h.storedVariants("/r").count == 1)
        }
    }

    @Test func aPieceThatDoesNotStartAtTheKeptBytesIsNotKept() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/m", headers: [("Cache-Control", "max-age=600")], size: 5_000, etag: "\"v1\"")
            let middle = try await h.get("/m", headers: Self.range("bytes=1000-1999"))
            #expect(middle.status == 206)
            #expect(Self.partials(h, "/m").isEmpty)
            _ = try await h.get("/m", headers: Self.range("bytes=0-499"))
            _ = try await h.get("/m", headers: Self.range("bytes=600-699"))  // a gap after the kept 500 bytes
            #expect(Self.partials(h, "/m").first?.verifiedBytes == 500)
        }
    }

    @Test func aPieceWithoutAStrongValidatorIsNotKept() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/w", headers: [("Cache-Control", "max-age=600")], size: 5_000, etag: "W/\"v1\"")
            _ = try await h.get("/w", headers: Self.range("bytes=0-999"))
            #expect(Self.partials(h, "/w").isEmpty)
        }
    }

    @Test func aPieceOfAChangedRepresentationIsNeverJoined() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/c", headers: [("Cache-Control", "max-age=600")], size: 5_000,
                                         etags: ["\"v1\"", "\"v2\""])
            _ = try await h.get("/c", headers: Self.range("bytes=0-999"))
            let later = try await h.get("/c", headers: Self.range("bytes=1000-"))
            #expect(later.headers.first("ETag") == "\"v2\"")
            #expect(h.storedVariants("/c").isEmpty)
            #expect(Self.partials(h, "/c").first?.verifiedBytes == 1_000)
        }
    }
}
