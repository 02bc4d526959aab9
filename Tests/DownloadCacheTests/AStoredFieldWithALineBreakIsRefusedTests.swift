import CacheTestSupport
@testable import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// No origin can send CR, LF or NUL inside a field (the transport refuses such a response), so stored metadata
/// holding one was written by something else (an edited index): it would add lines to the header block `get -i`
/// and `-D` write. Such metadata is not used: the entry is damaged, a miss, and the response is fetched again.
@Suite struct AStoredFieldWithALineBreakIsRefusedTests {
    static func metadata(field: (String, String) = ("X-A", "a"), statusText: String = "OK") -> StoredEntryMetadata {
        let stored = StoredResponse(response: CacheResponse(status: 200, headers: HTTPHeaders([("Cache-Control", "max-age=60"), field])),
                                    requestTime: Date(timeIntervalSince1970: 1_700_000_000),
                                    responseTime: Date(timeIntervalSince1970: 1_700_000_000),
                                    varyingRequestHeaders: HTTPHeaders(), requestMethod: "GET")
        return StoredEntryMetadata(url: "https://example.com/a", method: "GET", statusText: statusText, stored: stored)
    }

    @Test func metadataWithCRLFOrNULInAFieldOrReasonIsNotUsable() {
        #expect(Self.metadata().isFreeOfLineBreaks)
        for bad in ["a\r\nSet-Cookie: planted=1", "a\nb", "a\rb", "a\u{0}b"] {
            #expect(!Self.metadata(field: ("X-A", bad)).isFreeOfLineBreaks, "\(bad.debugDescription)")
            #expect(!Self.metadata(field: (bad, "v")).isFreeOfLineBreaks, "\(bad.debugDescription)")
            #expect(!Self.metadata(statusText: bad).isFreeOfLineBreaks, "\(bad.debugDescription)")
        }
    }

    @Test func aPlantedLineBreakMakesTheEntryAMiss() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/x", headers: [("Cache-Control", "max-age=600")], body: "x")
            _ = try await h.get("/x")
            let info = try #require(h.storedVariants("/x").first)
            var planted = try #require(StoredEntryMetadata.decode(info.metadata))
            planted.stored.response.headers.add("X-A", "a\r\nSet-Cookie: planted=1")
            try h.cache.store.updateMetadata(try planted.encoded(), for: info.key)
            let again = try await h.get("/x")
            #expect(again.source == .network, "\(again.reason)")
            #expect(!again.headers.contains("Set-Cookie"))
            #expect(try await h.hits("/x").total == 2)
        }
    }
    /// The same for the metadata of a partial entry (an interrupted transfer): it is not listed, not resumed
    /// (no Range, the whole body is fetched again from byte 0) and removed, and its fields are never served.
    @Test func aPlantedLineBreakInAPartialEntryMakesItUnusable() async throws {
        try await withHarness { h in
            let size = ResumeInterruptedTransferTests.size
            let kept = try await ResumeInterruptedTransferTests.interruptedByTruncation(h, "/big")
            #expect(kept > 0)
            let info = try #require(ResumeInterruptedTransferTests.partials(h, "/big").first)
            var planted = try #require(StoredEntryMetadata.decode(info.metadata))
            planted.stored.response.headers.add("X-A", "a\r\nSet-Cookie: planted=1")
            // The same verified bytes, under the planted metadata (replacing the partial of that key).
            let writer = try h.cache.store.makeBodyWriter()
            try writer.write(ResumeInterruptedTransferTests.generated(size).prefix(Int(kept)))
            try h.cache.store.beginPartial(writer, metadata: try planted.encoded(), for: info.key)
            #expect(h.cache.store.keepPartial(writer) == kept)
            #expect(h.cache.partialDescriptions(for: h.origin.url("/big")).isEmpty)

            try await h.origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: size,
                                         etag: "\"v1\"")
            let whole = try await h.get("/big")
            try ResumeInterruptedTransferTests.expectWholeAndStored(h, "/big", whole)
            #expect(!whole.headers.contains("Set-Cookie"))
            #expect(!whole.headers.contains("X-A"))
            let hits = try await h.hits("/big")
            #expect(hits.total == 2 && hits.ranged == 0)
        }
    }
}
