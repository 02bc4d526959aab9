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
}
