import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// RFC 9111 §3.1: hop-by-hop fields and Connection-named fields are not stored, so neither a cache hit nor
/// `info` / `--json` (which read the stored metadata) show them.
@Suite struct StoredHeaderTests {
    @Test(arguments: [CacheMode.private, .shared])
    func hopByHopFieldsAreNotStored(mode: CacheMode) async throws {
        try await withHarness({ $0.mode = mode }) { h in
            try await h.origin.configure(path: "/hop", headers: [
                ("Cache-Control", "max-age=60"), ("Connection", "keep-alive, X-Hop"), ("Keep-Alive", "timeout=5"),
                ("X-Hop", "per-connection"), ("Trailer", "X-Checksum"), ("Proxy-Connection", "keep-alive"),
                ("X-End", "kept"),
            ], body: "hop")
            _ = try await h.get("/hop")
            let metadata = try #require(h.storedVariants("/hop").first.flatMap { StoredEntryMetadata.decode($0.metadata) })
            let names = Set(metadata.stored.response.headers.fields.map { $0.name.lowercased() })
            for name in ["connection", "keep-alive", "x-hop", "trailer", "proxy-connection", "transfer-encoding"] {
                #expect(!names.contains(name), "\(name) was stored")
            }
            #expect(names.contains("x-end") && names.contains("cache-control"))
            let hit = try await h.get("/hop")
            #expect(hit.source == .cache && !hit.headers.contains("Keep-Alive") && !hit.headers.contains("X-Hop"))
        }
    }
}
