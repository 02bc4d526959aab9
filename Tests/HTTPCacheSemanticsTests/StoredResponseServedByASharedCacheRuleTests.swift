import Foundation
import Testing
@testable import HTTPCacheSemantics

/// What a shared cache may serve of a stored response another cache put in its namespace (a private cache, or a
/// build that kept cookies): nothing when it is `private` or sets a cookie without `public`/`s-maxage` (a shared
/// cache would not have stored it), else the response without `Set-Cookie`/`Set-Cookie2` (RFC 9111 §3.1,
/// §5.2.2.7, §7.3). A private cache serves it unchanged.
@Suite struct StoredResponseServedByASharedCacheRuleTests {
    static func served(_ lines: [String], mode: CacheMode = .shared, targets: [String] = []) -> StoredResponse? {
        RFC9111.storedResponseForServing(Fixture.stored(Fixture.headers(lines)), mode: mode, targetedFields: targets)
    }

    @Test func aCookieWithoutPublicOrSMaxAgeIsNotServed() {
        #expect(Self.served(["Cache-Control: max-age=60", "Set-Cookie: s=1"]) == nil)
        #expect(Self.served(["Cache-Control: max-age=60", "set-cookie2: s=1"]) == nil)
    }

    @Test func aPrivateResponseIsNotServed() {
        #expect(Self.served(["Cache-Control: private, max-age=60"]) == nil)
    }

    @Test func aPublicOrSMaxAgeResponseIsServedWithoutItsCookies() throws {
        for cc in ["public, max-age=60", "s-maxage=60"] {
            let served = try #require(Self.served(["Cache-Control: \(cc)", "Set-Cookie: a=1", "ETag: \"e\"", "SET-COOKIE: b=2"]))
            #expect(!RFC9111.setsCookie(served.response.headers))
            #expect(served.response.headers.first("ETag") == "\"e\"")
            #expect(served.response.headers.first("Cache-Control") == cc)
            #expect(served.response.headers.fields.count == 3)  // Cache-Control, ETag, Date
        }
    }

    @Test func aResponseWithoutCookieIsServedUnchanged() throws {
        let lines = ["Cache-Control: max-age=60", "ETag: \"e\"", "X-Set-Cookie: not one"]
        let served = try #require(Self.served(lines))
        #expect(served == Fixture.stored(Fixture.headers(lines)))
    }

    @Test func aPrivateCacheServesEverythingUnchanged() throws {
        let lines = ["Cache-Control: private, max-age=60", "Set-Cookie: s=1"]
        #expect(Self.served(lines, mode: .private) == Fixture.stored(Fixture.headers(lines)))
    }

    @Test func theTargetedFieldDecidesAsItDoesForStorage() throws {
        // RFC 9213: a targeted field replaces Cache-Control for a cache that uses it.
        let lines = ["Cache-Control: private", "CDN-Cache-Control: public, max-age=60", "Set-Cookie: s=1"]
        let served = try #require(Self.served(lines, targets: ["CDN-Cache-Control"]))
        #expect(!RFC9111.setsCookie(served.response.headers))
        #expect(Self.served(lines) == nil)
    }
}
