import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9111 §4.4: invalidation by unsafe methods (target URI, Location, Content-Location on the same origin).
@Suite struct InvalidationTests {
    static let target = URL(string: "https://Example.com/items/1?x=1#f")!

    @Test(arguments: [
        ("POST", 200, [String](), ["GET https://example.com/items/1?x=1", "HEAD https://example.com/items/1?x=1"]),
        ("PUT", 204, [], ["GET https://example.com/items/1?x=1", "HEAD https://example.com/items/1?x=1"]),
        ("DELETE", 302, [], ["GET https://example.com/items/1?x=1", "HEAD https://example.com/items/1?x=1"]),
        ("PATCH", 201, ["Location: /items/2", "Content-Location: https://EXAMPLE.com:443/items/3"],
         ["GET https://example.com/items/1?x=1", "HEAD https://example.com/items/1?x=1", "GET https://example.com/items/2",
          "HEAD https://example.com/items/2", "GET https://example.com/items/3", "HEAD https://example.com/items/3"]),
        ("POST", 200, ["Location: https://other.example/x", "Content-Location: http://example.com/items/4"],
         ["GET https://example.com/items/1?x=1", "HEAD https://example.com/items/1?x=1"]),  // other origins ignored
        ("POST", 200, ["Location: https://example.com:8443/x"], ["GET https://example.com/items/1?x=1", "HEAD https://example.com/items/1?x=1"]),
        ("POST", 404, [], []),  // error responses do not invalidate
        ("POST", 500, [], []),
        ("GET", 200, ["Location: /items/2"], []),  // safe methods do not invalidate
        ("HEAD", 200, [], []), ("OPTIONS", 200, [], []), ("TRACE", 200, [], []),
    ] as [(String, Int, [String], [String])])
    func invalidatedKeys(method: String, status: Int, headers: [String], expected: [String]) {
        let request = CacheRequest(method: method, url: Self.target)
        let keys = RFC9111.invalidatedKeys(request: request, response: CacheResponse(status: status, headers: Fixture.headers(headers)))
        #expect(keys == expected)
    }

    /// The reason for an unsafe request's answer says why it is not stored (§3, RFC 9110 §9.3.3) and what it
    /// invalidated (§4.4), never that §4.4 makes POST uncacheable.
    @Test func unsafeMethodReasonSaysWhyNotStoredAndWhatWasInvalidated() {
        let post = CacheRequest(method: "POST", url: Self.target)
        let invalidating = RFC9111.unsafeMethodReason(request: post, response: CacheResponse(
            status: 201, headers: HTTPHeaders([("Location", "/items/2")])))
        #expect(invalidating.hasPrefix("POST response not stored (RFC 9111 §3: "))
        #expect(invalidating.contains("RFC 9110 §9.3.3"))
        #expect(invalidating.hasSuffix("; the stored responses of 2 URIs invalidated (RFC 9111 §4.4)"))
        let failed = RFC9111.unsafeMethodReason(request: post, response: CacheResponse(status: 500, headers: HTTPHeaders()))
        #expect(failed.hasSuffix("; nothing invalidated: status 500 is an error (RFC 9111 §4.4)"))
        let delete = RFC9111.unsafeMethodReason(request: CacheRequest(method: "DELETE", url: Self.target),
                                                response: CacheResponse(status: 204, headers: HTTPHeaders()))
        #expect(delete == "DELETE response not stored (RFC 9111 §3: the method is not cacheable); the stored responses of 1 URI invalidated (RFC 9111 §4.4)")
    }
}

/// RFC 9111 §5.1 (Age on served responses), §3.1 (hop-by-hop fields), §5.2.2.4 (qualified no-cache fields).
@Suite struct ServingHeadersTests {
    @Test(arguments: [(40.0, "40"), (39.9999999, "40"), (39.5, "39"), (0.0, "0")])
    func servedAgeIsWholeSecondsAndSurvivesRoundingNoise(elapsed: Double, expected: String) {
        // A response received at t0 served `elapsed` seconds later; the Date round trip through JSON can turn
        // 40 s into 39.9999999 s, which must still read as Age: 40.
        let stored = Fixture.stored(Fixture.headers(["Cache-Control: max-age=600"]))
        let headers = RFC9111.responseHeadersForServing(stored, now: Fixture.at(elapsed))
        #expect(headers.values(for: "Age") == [expected])
    }

    @Test func servedHeadersCarryAgeAndDropHopByHop() {
        let stored = Fixture.stored(Fixture.headers([
            "Cache-Control: max-age=600, no-cache=\"Set-Cookie\"", "Connection: X-Private", "X-Private: 1", "Keep-Alive: 5",
            "Transfer-Encoding: chunked", "Set-Cookie: s=1", "Age: 10", "ETag: \"a\"",
        ]))
        let headers = RFC9111.responseHeadersForServing(stored, now: Fixture.at(20.7))
        #expect(headers.values(for: "Age") == ["30"])
        #expect(!headers.contains("Connection") && !headers.contains("X-Private") && !headers.contains("Keep-Alive"))
        #expect(!headers.contains("Transfer-Encoding") && !headers.contains("Set-Cookie"))
        #expect(headers["ETag"] == "\"a\"")
        let revalidated = RFC9111.responseHeadersForServing(stored, now: Fixture.at(0), revalidated: true)
        #expect(revalidated["Set-Cookie"] == "s=1" && revalidated["Age"] == "10")
    }
}
