import Foundation
import Testing
@testable import HTTPCacheSemantics

/// A cookie is one client's state: a shared cache stores a response that sets one only when the origin made it
/// everyone's (`public`, `s-maxage`), stores it without `Set-Cookie`, never takes a 304's `Set-Cookie` into the
/// stored response and never hands one to another client (RFC 9111 §3.1, §7.3). A private cache is unchanged.
/// Times are fixed (``Fixture/t0``).
@Suite struct SharedCacheCookieRuleTests {
    static let shared = EvaluationOptions(mode: .shared)
    static let privateMode = EvaluationOptions(mode: .private)

    @Test func perClientFieldsAreFoundWhateverTheirCase() {
        #expect(RFC9111.setsCookie(Fixture.headers(["set-COOKIE: a=1"])))
        #expect(RFC9111.setsCookie(Fixture.headers(["Set-Cookie2: a=1"])))
        #expect(!RFC9111.setsCookie(Fixture.headers(["Cookie: a=1", "X-Set-Cookie: b"])))
        let stripped = RFC9111.withoutPerClientFields(Fixture.headers(["A: 1", "Set-Cookie: a=1", "B: 2", "set-cookie: b=2"]))
        #expect(stripped.pairs == [["A", "1"], ["B", "2"]])
    }

    @Test func theStoredResponseOfASharedCacheHasNoCookie() {
        let response = CacheResponse(status: 200, headers: Fixture.headers(
            ["Cache-Control: public, max-age=60", "Set-Cookie: session=alice", "ETag: \"a\"", "set-cookie: id=7"]))
        #expect(RFC9111.storability(request: Fixture.request(), response: response, mode: .shared) == .store)
        let stored = RFC9111.makeStoredResponse(request: Fixture.request(), response: response, requestTime: Fixture.t0,
                                                responseTime: Fixture.t0, options: Self.shared)
        #expect(!stored.response.headers.contains("Set-Cookie"))
        #expect(stored.response.headers.first("ETag") == "\"a\"")
        let kept = RFC9111.makeStoredResponse(request: Fixture.request(), response: response, requestTime: Fixture.t0,
                                              responseTime: Fixture.t0, options: Self.privateMode)
        #expect(kept.response.headers.values(for: "Set-Cookie") == ["session=alice", "id=7"])
    }

    @Test func aSharedCacheTakesNoCookieFromA304() {
        let stored = Fixture.stored(Fixture.headers(["Cache-Control: public, max-age=0", "ETag: \"a\""]))
        let notModified = CacheResponse(status: 304, headers: Fixture.headers(
            ["ETag: \"a\"", "Set-Cookie: session=bob", "Cache-Control: public, max-age=60"]))
        let freshened = RFC9111.freshen(stored, with: notModified, requestTime: Fixture.at(10), responseTime: Fixture.at(10),
                                        options: Self.shared)
        #expect(!freshened.response.headers.contains("Set-Cookie"))
        #expect(freshened.response.headers.first("Cache-Control") == "public, max-age=60")
        let privately = RFC9111.freshen(stored, with: notModified, requestTime: Fixture.at(10), responseTime: Fixture.at(10),
                                        options: Self.privateMode)
        #expect(privately.response.headers.values(for: "Set-Cookie") == ["session=bob"])

        // A cookie stored earlier (before the cache was shared) does not survive a shared freshening either.
        let old = Fixture.stored(Fixture.headers(["Cache-Control: max-age=0", "ETag: \"a\"", "Set-Cookie: session=carol"]))
        let again = RFC9111.freshen(old, with: CacheResponse(status: 304, headers: Fixture.headers(["ETag: \"a\""])),
                                    requestTime: Fixture.at(10), responseTime: Fixture.at(10), options: Self.shared)
        #expect(!again.response.headers.contains("Set-Cookie"))

        // The HEAD freshening path (§4.3.5) follows the same rule.
        let head = CacheResponse(status: 200, headers: Fixture.headers(["ETag: \"a\"", "Set-Cookie: session=dave"]))
        let headFreshened = RFC9111.freshenWithHEAD(stored, head: head, requestTime: Fixture.at(10),
                                                    responseTime: Fixture.at(10), options: Self.shared)
        #expect(headFreshened?.response.headers.contains("Set-Cookie") == false)
    }

    @Test func theRevalidatingClientGetsThe304sCookie() {
        let served = Fixture.headers(["Cache-Control: public, max-age=60", "ETag: \"a\"", "Age: 0"])
        let notModified = Fixture.headers(["ETag: \"a\"", "Set-Cookie: session=bob"])
        let mine = RFC9111.headersForTheRevalidatingClient(served, notModified: notModified, mode: .shared)
        #expect(mine.values(for: "Set-Cookie") == ["session=bob"])
        #expect(mine.first("ETag") == "\"a\"")
        // In a private cache the freshened stored response already carries it: nothing is added twice.
        let privately = Fixture.headers(["ETag: \"a\"", "Set-Cookie: session=bob"])
        #expect(RFC9111.headersForTheRevalidatingClient(privately, notModified: notModified, mode: .private) == privately)
    }

    @Test func anotherClientNeverGetsTheCookieOfASharedCache() {
        let headers = Fixture.headers(["Cache-Control: public, max-age=60, no-cache=\"X-Token\"", "Set-Cookie: session=alice",
                                       "X-Token: t", "ETag: \"a\""])
        let other = RFC9111.headersForAnotherClient(headers, mode: .shared)
        #expect(!other.contains("Set-Cookie") && !other.contains("X-Token") && other.contains("ETag"))
        let privately = RFC9111.headersForAnotherClient(headers, mode: .private)
        #expect(privately.values(for: "Set-Cookie") == ["session=alice"] && !privately.contains("X-Token"))
    }

    /// A shared cache serves what `storedResponseForServing` gives it (the headers it serves are made from that):
    /// a stored cookie never reaches a client.
    @Test func aSharedCacheServesNoStoredCookie() throws {
        // Stored by a private cache on the same namespace earlier.
        let privateOne = Fixture.stored(Fixture.headers(["Cache-Control: max-age=60", "Set-Cookie: session=alice", "ETag: \"a\""]))
        #expect(RFC9111.storedResponseForServing(privateOne, mode: .shared) == nil)
        let publicOne = Fixture.stored(Fixture.headers(["Cache-Control: public, max-age=60", "Set-Cookie: session=alice",
                                                        "ETag: \"a\""]))
        let servable = try #require(RFC9111.storedResponseForServing(publicOne, mode: .shared))
        let shared = RFC9111.responseHeadersForServing(servable, now: Fixture.at(1))
        #expect(!shared.contains("Set-Cookie") && shared.first("ETag") == "\"a\"")
        let inPrivate = try #require(RFC9111.storedResponseForServing(privateOne, mode: .private))
        let privately = RFC9111.responseHeadersForServing(inPrivate, now: Fixture.at(1))
        #expect(privately.values(for: "Set-Cookie") == ["session=alice"])
    }

    @Test func aSharedCacheStoresACookieResponseOnlyWhenTheOriginMadeItEveryones() {
        func storable(_ lines: [String], _ mode: CacheMode, ignore: Bool = false) -> Bool {
            RFC9111.storability(request: Fixture.request(), response: CacheResponse(status: 200, headers: Fixture.headers(lines)),
                                mode: mode, ignoreServerCacheControl: ignore).isStorable
        }
        #expect(!storable(["Cache-Control: max-age=600", "Set-Cookie: a=1"], .shared))
        #expect(!storable(["Expires: \(Fixture.date(600))", "Set-Cookie: a=1"], .shared))
        #expect(storable(["Cache-Control: public", "Set-Cookie: a=1"], .shared))
        #expect(storable(["Cache-Control: s-maxage=600", "Set-Cookie: a=1"], .shared))
        #expect(!storable(["Cache-Control: public", "Set-Cookie: a=1"], .shared, ignore: true))
        #expect(storable(["Cache-Control: max-age=600", "Set-Cookie: a=1"], .private))
        #expect(storable(["Set-Cookie: a=1"], .private, ignore: true))
    }
}
