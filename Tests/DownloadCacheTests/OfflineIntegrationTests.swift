import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// Offline fallback (RFC 9111 §4.2.4, RFC 5861 stale-if-error, ASI fallbackToCacheIfLoadFails).
@Suite struct OfflineIntegrationTests {
    @Test func staleCopyIsServedWhenTheOriginIsStoppedAndFallbackIsOn() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/o", headers: [("Cache-Control", "max-age=10")], body: "offline copy",
                                         etag: "\"o\"")
            _ = try await h.get("/o")
            try await h.advance(by: 3_600)
            h.origin.stop()
            let response = try await h.get("/o", RequestOptions(fallbackToCacheIfLoadFails: true))
            #expect(response.source == .stale && response.isFromCache && !response.isFresh)
            #expect(response.text == "offline copy")
        }
    }

    @Test func withServingStaleWhenDisconnectedOffTheConnectionFailureIsReported() async throws {
        try await withHarness({ $0.servesStaleWhenDisconnected = false }) { h in
            try await h.origin.configure(path: "/o2", headers: [("Cache-Control", "max-age=10")], body: "x")
            _ = try await h.get("/o2")
            try await h.advance(by: 3_600)
            h.origin.stop()
            do throws(DownloadError) {
                _ = try await h.get("/o2")
                Issue.record("expected a connection failure")
            } catch {
                #expect(error.code == .connectionFailed)
                #expect(error.transportError?.isOriginUnreachable == true)
            }
        }
    }

    @Test func staleIfErrorAllowsTheStaleCopyWithoutAnyOption() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/sie", headers: [("Cache-Control", "max-age=10, stale-if-error=86400")],
                                         body: "sie")
            _ = try await h.get("/sie")
            try await h.advance(by: 600)
            h.origin.stop()
            let response = try await h.get("/sie")
            #expect(response.source == .stale && response.text == "sie")
        }
    }

    @Test func serverErrorFallsBackToTheStaleCopy() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/5xx", headers: [("Cache-Control", "max-age=10")], body: "good")
            _ = try await h.get("/5xx")
            try await h.advance(by: 600)
            try await h.origin.configure(path: "/5xx", status: 503, body: "down")
            let fallback = try await h.get("/5xx", RequestOptions(fallbackToCacheIfLoadFails: true))
            #expect(fallback.source == .stale && fallback.text == "good")
            let plain = try await h.get("/5xx")
            #expect(plain.source == .network && plain.status == 503 && plain.text == "down")
            // The 503 did not replace the good stored response.
            #expect(try await h.get("/5xx", RequestOptions(policy: .returnCacheDataDontLoad)).text == "good")
        }
    }

    @Test func droppedConnectionCountsAsUnreachable() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/drop", headers: [("Cache-Control", "max-age=10")], body: "kept")
            _ = try await h.get("/drop")
            try await h.advance(by: 600)
            try await h.origin.configure(path: "/drop", drop: true)
            let response = try await h.get("/drop", RequestOptions(fallbackToCacheIfLoadFails: true))
            #expect(response.source == .stale && response.text == "kept")
        }
    }

    @Test func timeoutFallsBackToTheStaleCopy() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=10")], body: "slow")
            _ = try await h.get("/slow")
            try await h.advance(by: 600)
            try await h.origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=10")], body: "slow", delay: 3)
            let response = try await h.get("/slow", RequestOptions(fallbackToCacheIfLoadFails: true, timeout: 0.5))
            #expect(response.source == .stale)
            // A timeout is a disconnection (RFC 9111 §4.2.4): served stale by default, without the option.
            let plain = try await h.get("/slow", RequestOptions(timeout: 0.5))
            #expect(plain.source == .stale && plain.text == "slow")
        }
    }
}
