import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Foundation
import Testing

/// Redirects to another origin (scheme, host, port) never carry Authorization, Proxy-Authorization, Cookie or
/// the URL's user info; within one origin they do.
@Suite struct RedirectCredentialTests {
    static let secrets: HTTPHeaders = [("Authorization", "Bearer s3cret"), ("Cookie", "session=c00kie"),
                                       ("Proxy-Authorization", "Basic cHJveHk="), ("X-Trace", "keep-me")]

    @Test func sameHostOtherPortGetsNoCredentials() async throws {
        try await withHarness { h in
            let other = try await OriginServer.start()
            defer { other.stop() }
            try await h.origin.configure(path: "/redir", status: 302, headers: [("Cache-Control", "no-store")],
                                         redirect: other.url("/echo-headers").absoluteString)
            let response = try await h.get("/redir", headers: Self.secrets)
            #expect(response.status == 200)
            #expect(response.text.contains("X-Trace: keep-me"))
            for secret in ["s3cret", "c00kie", "cHJveHk=", "Authorization", "Cookie"] {
                #expect(!response.text.contains(secret), "\(secret) reached the other origin")
            }
            #expect(try await other.hits("/echo-headers").total == 1)
        }
    }

    @Test func userInfoIsNotSentToTheOtherOrigin() async throws {
        try await withHarness { h in
            let other = try await OriginServer.start()
            defer { other.stop() }
            try await h.origin.configure(path: "/redir", status: 302, headers: [("Cache-Control", "no-store")],
                                         redirect: "//127.0.0.1:\(other.port)/echo-headers")
            let start = try #require(URL(string: "http://alice:pw1@127.0.0.1:\(h.origin.port)/redir"))
            let response = try await h.cache.response(for: CacheRequest(url: start))
            #expect(response.status == 200 && !response.text.contains("Authorization"))
        }
    }

    @Test func sameOriginRedirectKeepsCredentials() async throws {
        try await withHarness { h in
            try await h.origin.configure(path: "/redir", status: 302, headers: [("Cache-Control", "no-store")],
                                         redirect: "/echo-headers")
            let response = try await h.get("/redir", headers: Self.secrets)
            #expect(response.text.contains("Authorization: Bearer s3cret") && response.text.contains("Cookie: session=c00kie"))
        }
    }
}
