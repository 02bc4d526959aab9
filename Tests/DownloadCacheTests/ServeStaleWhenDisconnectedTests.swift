import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// RFC 9111 §4.2.4 by default: a stale stored response is served, marked `.stale`, when the origin is stopped,
/// closes the connection without answering, or times out — but not for a 5xx, and not past must-revalidate.
@Suite struct ServeStaleWhenDisconnectedTests {
    @Test func originStoppedServesTheStaleCopy() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/d", headers: [("Cache-Control", "max-age=10")], body: "kept")
            _ = try await h.get("/d")
            try await h.advance(by: 600)
            h.origin.stop()
            let response = try await h.get("/d")
            #expect(response.source == .stale && response.text == "kept" && !response.isFresh)
        }
    }

    @Test func connectionClosedServesTheStaleCopyButA503DoesNot() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/c", headers: [("Cache-Control", "max-age=10")], body: "kept")
            _ = try await h.get("/c")
            try await h.advance(by: 600)
            try await h.origin.configure(path: "/c", drop: true)
            let closed = try await h.get("/c")
            #expect(closed.source == .stale && closed.text == "kept")
            try await h.origin.configure(path: "/c", status: 503, body: "down")
            let error = try await h.get("/c")
            #expect(error.source == .network && error.status == 503 && error.text == "down")
            #expect(try await h.hits("/c").total >= 3)  // libcurl may retry a dropped reused connection once
        }
    }

    @Test func mustRevalidateForbidsIt() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/m", headers: [("Cache-Control", "max-age=10, must-revalidate")], body: "x")
            _ = try await h.get("/m")
            try await h.advance(by: 600)
            try await h.origin.configure(path: "/m", drop: true)
            do throws(DownloadError) {
                _ = try await h.get("/m")
                Issue.record("a must-revalidate response was served stale")
            } catch {
                #expect(error.code == .connectionFailed)
            }
        }
    }
}
