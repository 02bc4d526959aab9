import CacheTestSupport
import DownloadCache
import Foundation
import Testing

/// A pinned entry stays pinned when a new 200 replaces it (reload, a changed body after staleness).
@Suite struct PinAcrossReplacementTests {
    @Test func reloadedPinnedEntryStaysPinned() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/p", headers: [("Cache-Control", "max-age=600")], body: "one")
            _ = try await h.get("/p", RequestOptions(pin: true))
            #expect(h.storedVariants("/p").first?.isPinned == true)
            try await h.origin.configure(path: "/p", headers: [("Cache-Control", "max-age=600")], body: "two")
            let reloaded = try await h.get("/p", RequestOptions(policy: .reload))
            #expect(reloaded.text == "two")
            #expect(h.storedVariants("/p").first?.isPinned == true)
        }
    }

    @Test func changedRepresentationAfterStalenessStaysPinned() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/c", headers: [("Cache-Control", "max-age=10")], size: 100,
                                         etags: ["\"v1\"", "\"v2\""])
            _ = try await h.get("/c")
            try h.cache.setPinned(true, for: h.origin.url("/c"))
            try await h.advance(by: 60)
            let refreshed = try await h.get("/c")
            #expect(refreshed.headers.first("ETag") == "\"v2\"" && refreshed.source == .network)
            #expect(h.storedVariants("/c").first?.isPinned == true)
        }
    }

    @Test func unpinnedEntryStaysUnpinned() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/u", headers: [("Cache-Control", "max-age=600")], body: "one")
            _ = try await h.get("/u")
            _ = try await h.get("/u", RequestOptions(policy: .reload))
            #expect(h.storedVariants("/u").first?.isPinned == false)
        }
    }
}
