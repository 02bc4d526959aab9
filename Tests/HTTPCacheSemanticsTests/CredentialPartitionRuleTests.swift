import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9111 §3.5: URL user info is Authorization; responses to requests with credentials are stored in a
/// partition of those credentials (keyed hash) and served only to the same credentials, unless the origin made
/// them shareable (public, s-maxage, must-revalidate). Vary on credential fields keeps only keyed hashes.
@Suite struct CredentialPartitionRuleTests {
    static let secret = Fixture.secret(Array("namespace-secret".utf8))

    static func request(_ url: String, _ headers: HTTPHeaders = []) -> CacheRequest {
        CacheRequest(url: URL(string: url)!, headers: headers)
    }

    @Test(arguments: [
        ("https://example.com/a", false),
        ("https://alice:pw1@example.com/a", true),
        ("https://alice:@example.com/a", true),        // empty password
        ("https://alice@example.com/a", true),         // no password
        ("https://:@example.com/a", true),             // empty user and password
        ("https://al%69ce:p%77@example.com/a", true),  // percent-encoded user info
        ("HTTPS://ALICE:PW@EXAMPLE.COM:443/a", true),  // upper-case scheme and host
        ("https://example.com/a?next=user@example.org", false),  // '@' in the query is not user info
        ("https://example.com/a@b", false),            // '@' in the path is not user info
    ])
    func userInfoIsCredentials(url: String, expected: Bool) {
        #expect(RFC9111.hasCredentials(Self.request(url)) == expected)
        #expect((RFC9111.credentialTag(Self.request(url), secret: Self.secret) != nil) == expected)
    }

    @Test(arguments: ["Authorization", "authorization", "AUTHORIZATION"])
    func authorizationFieldIsCredentials(name: String) {
        #expect(RFC9111.hasCredentials(Self.request("https://example.com/a", HTTPHeaders([(name, "Bearer x")]))))
    }

    @Test func tagsSeparateEveryDifferentCredential() {
        let urls = ["https://alice:pw1@example.com/a", "https://alice:pw2@example.com/a", "https://bob:pw1@example.com/a",
                    "https://alice:@example.com/a", "https://alice@example.com/a", "https://:@example.com/a",
                    "https://al%69ce:pw1@example.com/a"]
        var tags = Set(urls.map { RFC9111.credentialTag(Self.request($0), secret: Self.secret) })
        tags.insert(RFC9111.credentialTag(Self.request("https://example.com/a", [("Authorization", "Basic YWxpY2U6cHcx")]),
                                          secret: Self.secret))
        #expect(tags.count == urls.count + 1)
        #expect(!tags.contains(nil))
        // Same credentials, another path or host case: same tag (the tag is about who asks, not what).
        #expect(RFC9111.credentialTag(Self.request("https://alice:pw1@EXAMPLE.com/b"), secret: Self.secret)
                == RFC9111.credentialTag(Self.request("https://alice:pw1@example.com/a"), secret: Self.secret))
        #expect(RFC9111.credentialTag(Self.request("https://alice:pw1@example.com/a"), secret: Self.secret)?.contains("pw1") == false)
    }

    struct StoreCase: Sendable, CustomStringConvertible {
        var url: String
        var request: [String] = []
        var response: [String]
        var mode: CacheMode
        var store: Bool
        var description: String { "\(url) \(request) \(response) \(mode)" }
    }

    static let storeCases: [StoreCase] = [
        StoreCase(url: "http://alice:pw1@h/auth", response: ["Cache-Control: max-age=60"], mode: .shared, store: false),
        StoreCase(url: "http://alice:@h/auth", response: ["Cache-Control: max-age=60"], mode: .shared, store: false),
        StoreCase(url: "http://alice:pw1@h/auth", response: ["Cache-Control: max-age=60"], mode: .private, store: true),
        StoreCase(url: "http://alice:pw1@h/auth", response: ["Cache-Control: public, max-age=60"], mode: .shared, store: true),
        StoreCase(url: "http://alice:pw1@h/auth", response: ["Cache-Control: s-maxage=60"], mode: .shared, store: true),
        StoreCase(url: "http://alice:pw1@h/auth", response: ["Cache-Control: max-age=60, must-revalidate"], mode: .shared, store: true),
        StoreCase(url: "http://h/auth", request: ["authorization: Bearer x"], response: ["Cache-Control: max-age=60"], mode: .shared, store: false),
        StoreCase(url: "http://h/auth", response: ["Cache-Control: max-age=60"], mode: .shared, store: true),
    ]

    @Test(arguments: storeCases)
    func userInfoCountsAsAuthorizationForStorage(_ c: StoreCase) {
        let request = CacheRequest(url: URL(string: c.url)!, headers: Fixture.headers(c.request))
        let response = CacheResponse(status: 200, headers: Fixture.headers(c.response))
        #expect(RFC9111.storability(request: request, response: response, mode: c.mode).isStorable == c.store)
    }

    struct ServeCase: Sendable, CustomStringConvertible {
        var storedFor: String
        var response: String
        var askedBy: String
        var served: Bool
        var description: String { "stored for \(storedFor) (\(response)) asked by \(askedBy)" }
    }

    static let serveCases: [ServeCase] = [
        ServeCase(storedFor: "http://alice:pw1@h/a", response: "max-age=60", askedBy: "http://alice:pw1@h/a", served: true),
        ServeCase(storedFor: "http://alice:pw1@h/a", response: "max-age=60", askedBy: "http://h/a", served: false),
        ServeCase(storedFor: "http://alice:pw1@h/a", response: "max-age=60", askedBy: "http://bob:other@h/a", served: false),
        ServeCase(storedFor: "http://alice:pw1@h/a", response: "max-age=60", askedBy: "http://alice:pw2@h/a", served: false),
        ServeCase(storedFor: "http://alice:pw1@h/a", response: "max-age=60", askedBy: "http://alice@h/a", served: false),
        ServeCase(storedFor: "http://alice:@h/a", response: "max-age=60", askedBy: "http://alice@h/a", served: false),
        ServeCase(storedFor: "http://alice:pw1@h/a", response: "private, max-age=60", askedBy: "http://h/a", served: false),
        // §3.5: the origin made it shareable.
        ServeCase(storedFor: "http://alice:pw1@h/a", response: "public, max-age=60", askedBy: "http://h/a", served: true),
        ServeCase(storedFor: "http://alice:pw1@h/a", response: "s-maxage=60, max-age=60", askedBy: "http://bob:x@h/a", served: true),
        ServeCase(storedFor: "http://alice:pw1@h/a", response: "max-age=60, must-revalidate", askedBy: "http://h/a", served: true),
        // An anonymous response is served to anonymous requests only, unless the origin made it shareable.
        ServeCase(storedFor: "http://h/a", response: "max-age=60", askedBy: "http://h/a", served: true),
        ServeCase(storedFor: "http://h/a", response: "max-age=60", askedBy: "http://alice:pw1@h/a", served: false),
        ServeCase(storedFor: "http://h/a", response: "public, max-age=60", askedBy: "http://alice:pw1@h/a", served: true),
    ]

    @Test(arguments: serveCases)
    func partitionDecidesWhoIsServed(_ c: ServeCase) {
        let options = EvaluationOptions(keySecret: Self.secret)
        let stored = RFC9111.makeStoredResponse(
            request: Self.request(c.storedFor),
            response: CacheResponse(status: 200, headers: [("Cache-Control", c.response), ("Date", Fixture.date(0))]),
            requestTime: Fixture.t0, responseTime: Fixture.t0, options: options)
        let asked = Self.request(c.askedBy)
        #expect(RFC9111.matches(stored: stored, request: asked, secret: Self.secret) == c.served)
        let decision = RFC9111.evaluate(request: asked, stored: stored, now: Fixture.at(1), options: options)
        #expect(decision.servesStored == c.served, "\(decision.reason)")
    }

    @Test func authorizationHeaderPartitionsInPrivateMode() {
        let options = EvaluationOptions(keySecret: Self.secret)
        let stored = RFC9111.makeStoredResponse(
            request: Self.request("http://h/a", [("Authorization", "Bearer alice")]),
            response: CacheResponse(status: 200, headers: [("Cache-Control", "max-age=60"), ("Date", Fixture.date(0))]),
            requestTime: Fixture.t0, responseTime: Fixture.t0, options: options)
        #expect(RFC9111.matches(stored: stored, request: Self.request("http://h/a", [("authorization", "Bearer alice")]), secret: Self.secret))
        #expect(!RFC9111.matches(stored: stored, request: Self.request("http://h/a", [("Authorization", "Bearer bob")]), secret: Self.secret))
        #expect(!RFC9111.matches(stored: stored, request: Self.request("http://h/a"), secret: Self.secret))
        #expect(!RFC9111.matches(stored: stored, request: Self.request("http://h/a", [("Authorization", "anonymous")]), secret: Self.secret))
        // Another namespace secret cannot reproduce the partition.
        #expect(!RFC9111.matches(stored: stored, request: Self.request("http://h/a", [("Authorization", "Bearer alice")]), secret: .none))
    }

    @Test func variantKeysOfDifferentCredentialsDiffer() {
        #expect(RFC9111.variantKey(secondaryKey: "", credentialPartition: RFC9111.anonymousPartition) == "")
        let a = RFC9111.variantKey(secondaryKey: "", credentialPartition: "hmac-sha256:aa")
        let b = RFC9111.variantKey(secondaryKey: "", credentialPartition: "hmac-sha256:bb")
        #expect(a != b && a != "" && RFC9111.variantKey(secondaryKey: "accept:x", credentialPartition: nil) == "accept:x")
    }

    // MARK: Vary on credential fields (stored keys hold keyed hashes only)

    @Test(arguments: ["Authorization", "Cookie", "Proxy-Authorization", "cookie", "AUTHORIZATION"])
    func varyOnCredentialFieldStoresOnlyAKeyedHash(field: String) {
        let response = CacheResponse(status: 200, headers: [("Vary", "Accept, \(field)"), ("Cache-Control", "max-age=60")])
        let request: HTTPHeaders = [(field, "s3cret-value"), ("Accept", "text/html")]
        let varying = RFC9111.varyingRequestHeaders(response: response, request: request, secret: Self.secret)
        let key = RFC9111.secondaryKey(vary: response.headers, request: request, secret: Self.secret) ?? ""
        #expect(!varying.description.contains("s3cret"))
        #expect(!key.contains("s3cret"))
        #expect(varying.first("Accept") == "text/html")  // other fields stay readable
        let stored = StoredResponse(response: response, requestTime: Fixture.t0, responseTime: Fixture.t0,
                                    varyingRequestHeaders: varying)
        #expect(RFC9111.matches(stored: stored, request: Fixture.request(request), secret: Self.secret))
        #expect(RFC9111.matches(stored: stored, request: Fixture.request([(field.uppercased(), "  s3cret-value "), ("Accept", "text/html")]),
                                secret: Self.secret))
        #expect(!RFC9111.matches(stored: stored, request: Fixture.request([(field, "other"), ("Accept", "text/html")]), secret: Self.secret))
        #expect(!RFC9111.matches(stored: stored, request: Fixture.request([("Accept", "text/html")]), secret: Self.secret))
        // A caller presenting the stored hash itself gets nothing.
        let hash = varying.first(field) ?? ""
        #expect(!RFC9111.matches(stored: stored, request: Fixture.request([(field, hash), ("Accept", "text/html")]), secret: Self.secret))
        // The stored response recomputes the key it was stored under, without re-hashing the hashes.
        #expect(RFC9111.variantKey(of: stored) == key)
        // Different credentials give different secondary keys (stored side by side).
        let other = RFC9111.secondaryKey(vary: response.headers, request: [(field, "x"), ("Accept", "text/html")], secret: Self.secret)
        #expect(other != key)
    }

    @Test func plaintextCredentialFromAnOlderVersionNeverMatches() {
        let response = CacheResponse(status: 200, headers: [("Vary", "Cookie"), ("Cache-Control", "max-age=60")])
        let stored = StoredResponse(response: response, requestTime: Fixture.t0, responseTime: Fixture.t0,
                                    varyingRequestHeaders: [("Cookie", "id=1")])
        #expect(!RFC9111.matches(stored: stored, request: Fixture.request([("Cookie", "id=1")]), secret: Self.secret))
    }
}
