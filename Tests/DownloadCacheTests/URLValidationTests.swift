import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// Which URLs the client accepts before any connection attempt: a port outside 1...65535 is an invalid URL, an
/// IPv6 literal is a valid one.
@Suite struct URLValidationTests {
    /// A port outside 1...65535 is an invalid URL, reported before any connection attempt.
    @Test(arguments: ["http://127.0.0.1:99999/x", "http://127.0.0.1:0/x", "http://[::1]:70000/x"])
    func outOfRangePortIsAnInvalidURL(_ text: String) async throws {
        try await withHarness { h in
            let url = try #require(URL(string: text))
            do throws(DownloadError) {
                _ = try await h.cache.response(for: CacheRequest(url: url))
                Issue.record("\(text) must be refused")
            } catch {
                #expect(error.code == .invalidURL)
            }
        }
    }

    /// An IPv6 literal URL is a valid URL: an unreachable one fails as a connection failure, not
    /// as an invalid URL (with the default transport; see the report for URLSessionTransport).
    @Test(arguments: [false, true])
    func ipv6LiteralURLIsAccepted(_ urlSession: Bool) async throws {
        try await withHarness({ if urlSession { $0.transport = URLSessionTransport(timeout: 20) } }) { h in
            let url = try #require(URL(string: "http://[::1]:9/x"))
            do throws(DownloadError) {
                _ = try await h.cache.response(for: CacheRequest(url: url))
                Issue.record("nothing listens on [::1]:9")
            } catch {
                if urlSession {
                    // FoundationNetworking cannot reach IPv6 literals (swift-corelibs-foundation #5496): a clear
                    // refusal instead of "NSURLErrorDomain error -1000".
                    #expect(error.code == .other && error.detail.contains("IPv6"), "\(error)")
                } else {
                    #expect(error.code == .connectionFailed, "\(error)")
                }
            }
        }
    }
}
