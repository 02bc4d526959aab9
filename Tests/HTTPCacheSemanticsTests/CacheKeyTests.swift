import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9111 §2 (primary cache key) and §4.1 (Vary, secondary key, matching stored responses).
@Suite struct CacheKeyTests {
    @Test(arguments: [
        ("https://Example.COM/a", "https://example.com/a"),
        ("HTTPS://example.com:443/a", "https://example.com/a"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("http://example.com:8080/a", "http://example.com:8080/a"),
        ("https://example.com:80/a", "https://example.com:80/a"),
        ("https://example.com", "https://example.com/"),
        ("https://example.com/A/b#frag", "https://example.com/A/b"),
        ("https://example.com/a?Q=1&b=%7e#x", "https://example.com/a?Q=1&b=%7e"),
        ("https://example.com/a?", "https://example.com/a?"),
        ("https://example.com/%7E/./x", "https://example.com/%7E/./x"),
        ("https://user:pw@example.com/a", "https://example.com/a"),
        ("ftp://user:pw@Example.com/a", "ftp://user:pw@example.com/a"),
        ("http://[::1]:8080/a", "http://[::1]:8080/a"),
        ("http://127.0.0.1:80/a", "http://127.0.0.1/a"),
        ("https://example.com?q=1", "https://example.com/?q=1"),
        ("http://example.com:0080/a", "http://example.com/a"),
        ("http://u@Example.com:81", "http://example.com:81/"),
        ("http://[FE80::1]/a", "http://[fe80::1]/a"),
        ("https://example.com/a/b?c=d/e:f@g#h?i", "https://example.com/a/b?c=d/e:f@g"),
        ("file:///tmp/A#x", "file:///tmp/A"),
    ])
    func normalisesURI(input: String, expected: String) throws {
        let url = try #require(URL(string: input))
        #expect(RFC9111.normalizedURI(url) == expected)
    }

    @Test func pathsAndQueriesAreCaseSensitive() throws {
        let a = try #require(URL(string: "https://example.com/Image.png"))
        let b = try #require(URL(string: "https://example.com/image.png"))
        let c = try #require(URL(string: "https://example.com/image.png?x=1"))
        #expect(RFC9111.primaryKey(method: "GET", url: a) != RFC9111.primaryKey(method: "GET", url: b))
        #expect(RFC9111.primaryKey(method: "GET", url: b) != RFC9111.primaryKey(method: "GET", url: c))
        #expect(RFC9111.primaryKey(method: "GET", url: b) != RFC9111.primaryKey(method: "HEAD", url: b))
        #expect(RFC9111.primaryKey(method: "GET", url: b) == "GET https://example.com/image.png")
    }

    @Test func headLooksUpGetToo() {
        let keys = RFC9111.lookupKeys(for: Fixture.request(method: "HEAD"))
        #expect(keys == ["HEAD https://example.com/a", "GET https://example.com/a"])
        #expect(RFC9111.lookupKeys(for: Fixture.request()) == ["GET https://example.com/a"])
    }

    @Test(arguments: [
        // (Vary, stored request headers, presented request headers, match)
        ("Accept-Encoding", [("Accept-Encoding", "gzip, br")], [("accept-encoding", "gzip,   br")], true),
        ("Accept-Encoding", [("Accept-Encoding", "gzip, br")], [("Accept-Encoding", "gzip"), ("Accept-Encoding", "br")], true),
        ("Accept-Encoding", [("Accept-Encoding", "gzip, br")], [("Accept-Encoding", "br, gzip")], false),
        ("Accept-Encoding", [("Accept-Encoding", "gzip")], [], false),
        ("Accept-Encoding", [], [], true),
        ("Accept-Encoding", [("Accept-Encoding", "")], [], false),
        ("accept-encoding, COOKIE", [("Cookie", "a=1"), ("Accept-Encoding", "gzip")], [("accept-encoding", "gzip"), ("cookie", "a=1")], true),
        ("Accept-Encoding,Cookie", [("Cookie", "a=1"), ("Accept-Encoding", "gzip")], [("Accept-Encoding", "gzip"), ("Cookie", "a=2")], false),
        ("", [], [("Accept", "x")], true),
        ("*", [], [], false),
        ("Accept, *", [("Accept", "x")], [("Accept", "x")], false),
        ("User-Agent", [("User-Agent", "A  B\t C")], [("User-Agent", "A B C")], true),
    ] as [(String, [(String, String)], [(String, String)], Bool)])
    func secondaryKeyMatching(vary: String, storedRequest: [(String, String)], presented: [(String, String)], match: Bool) {
        var responseHeaders = HTTPHeaders()
        if !vary.isEmpty { responseHeaders.add("Vary", vary) }
        let request = Fixture.request(HTTPHeaders(storedRequest))
        let secret = Fixture.secret([])
        let varying = RFC9111.varyingRequestHeaders(response: CacheResponse(status: 200, headers: responseHeaders),
                                                    request: request.headers, secret: secret)
        let stored = Fixture.stored(responseHeaders, varying: varying)
        #expect(RFC9111.matches(stored: stored, request: Fixture.request(HTTPHeaders(presented)), secret: secret) == match)
    }

    /// ``CacheKeySecret/none`` has no hash function: credential values are kept as no plaintext and match nothing,
    /// so a response varying on Cookie or partitioned by Authorization is never served with it.
    @Test func withoutAHashFunctionNothingCredentialDependentMatches() {
        let headers: HTTPHeaders = [("Vary", "Cookie")]
        let request = Fixture.request([("Cookie", "a=1"), ("Authorization", "Bearer t0k3n")])
        let varying = RFC9111.varyingRequestHeaders(response: CacheResponse(status: 200, headers: headers),
                                                    request: request.headers, secret: .none)
        #expect(varying.values(for: "Cookie") == [CacheKeySecret.unavailableTag])
        #expect(!RFC9111.matches(stored: Fixture.stored(headers, varying: varying), request: request, secret: .none))
        let partition = RFC9111.credentialPartition(request: request, response: CacheResponse(status: 200, headers: []),
                                                    options: EvaluationOptions(keySecret: .none))
        #expect(partition == CacheKeySecret.unavailableTag)
        var partitioned = Fixture.stored([])
        partitioned.credentialPartition = partition
        #expect(!RFC9111.matches(stored: partitioned, request: request, secret: .none))
    }

    @Test func secondaryKeyShape() {
        #expect(RFC9111.secondaryKey(vary: [], request: [("Accept", "x")]) == "")
        #expect(RFC9111.secondaryKey(vary: [("Vary", "*")], request: []) == nil)
        let key = RFC9111.secondaryKey(vary: [("Vary", "b, A")], request: [("a", "1 ,  2"), ("B", "x")])
        #expect(key == "a:1,2\nb:x")
        // Absent differs from empty; separators inside values cannot forge another field.
        #expect(RFC9111.secondaryKey(vary: [("Vary", "a")], request: []) != RFC9111.secondaryKey(vary: [("Vary", "a")], request: [("a", "")]))
        #expect(RFC9111.secondaryKey(vary: [("Vary", "a, b")], request: [("a", "1\nb:2")])
            != RFC9111.secondaryKey(vary: [("Vary", "a, b")], request: [("a", "1"), ("b", "2")]))
    }

    @Test func varyingRequestHeadersKeepsOnlyNamedFields() {
        let response = CacheResponse(status: 200, headers: [("Vary", "Accept-Language, accept-encoding")])
        let picked = RFC9111.varyingRequestHeaders(response: response, request: [("Accept", "*/*"), ("Accept-Encoding", "gzip"), ("accept-language", "en")])
        #expect(picked.pairs == [["Accept-Encoding", "gzip"], ["accept-language", "en"]])
        #expect(RFC9111.varyingRequestHeaders(response: CacheResponse(status: 200, headers: [("Vary", "*")]), request: [("A", "b")]).isEmpty)
    }

    @Test(arguments: [("GET", "GET", true), ("GET", "HEAD", true), ("HEAD", "GET", false), ("HEAD", "HEAD", true), ("GET", "POST", false)])
    func methodMatching(storedMethod: String, requestMethod: String, match: Bool) {
        let stored = Fixture.stored([("Cache-Control", "max-age=60")], method: storedMethod)
        #expect(RFC9111.matches(stored: stored, request: Fixture.request(method: requestMethod)) == match)
    }
}
