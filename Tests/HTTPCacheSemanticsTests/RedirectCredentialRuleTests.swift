import Foundation
import Testing
@testable import HTTPCacheSemantics

/// Credentials and cookies never cross to another origin (scheme, host, port) on a redirect (RFC 9110 §15.4).
@Suite struct RedirectCredentialRuleTests {
    static let secrets: HTTPHeaders = [
        ("Authorization", "Bearer s3cret"), ("cookie", "session=c00kie"), ("PROXY-AUTHORIZATION", "Basic cHJveHk="),
        ("Accept", "text/plain"),
    ]

    @Test(arguments: [
        ("http://127.0.0.1:8001/redir", "http://127.0.0.1:8002/echo", false),       // same host, other port
        ("https://example.com/a", "http://example.com/a", false),                  // https → http downgrade
        ("http://example.com/a", "https://example.com/a", false),                  // upgrade is another origin too
        ("http://example.com/a", "http://evil.example/a", false),
        ("http://example.com/a", "http://sub.example.com/a", false),
        ("http://example.com/a", "http://example.com:8080/a", false),
        ("http://example.com/a", "http://example.com/b?x=1", true),
        ("http://example.com/a", "HTTP://EXAMPLE.COM/b", true),                   // scheme and host case-insensitive
        ("http://example.com/a", "http://example.com:80/b", true),                // default port spelled out
        ("https://example.com/a", "https://example.com:443/b", true),
        ("http://alice:pw@example.com/a", "http://example.com/b", true),          // user info is not the origin
    ])
    func credentialsStayWithinTheOrigin(from: String, to: String, kept: Bool) throws {
        let next = RFC9111.redirectHeaders(Self.secrets, from: try #require(URL(string: from)), to: try #require(URL(string: to)))
        #expect(next.first("Accept") == "text/plain")
        for name in ["Authorization", "Cookie", "Proxy-Authorization"] {
            #expect(next.contains(name) == kept, "\(name) from \(from) to \(to)")
        }
    }

    @Test func oddlySpelledCredentialNamesAreDroppedToo() throws {
        let headers = HTTPHeaders([("aUtHoRiZaTiOn", "x"), ("Cookie ", "y"), ("X-Keep", "z")])
        let next = RFC9111.redirectHeaders(headers, from: try #require(URL(string: "http://a/")),
                                           to: try #require(URL(string: "http://b/")))
        #expect(next.pairs == [["X-Keep", "z"]])
    }

    @Test func aRelativeLocationKeepsUserInfoOnlyOnTheSameOrigin() throws {
        let base = try #require(URL(string: "http://alice:pw@127.0.0.1:8001/redir"))
        let sameOrigin = try #require(URL(string: "/next", relativeTo: base)?.absoluteURL)
        let otherOrigin = try #require(URL(string: "//127.0.0.1:8002/next", relativeTo: base)?.absoluteURL)
        #expect(RFC9111.hasCredentials(CacheRequest(url: sameOrigin)))
        #expect(!RFC9111.hasCredentials(CacheRequest(url: otherOrigin)))
    }
}
