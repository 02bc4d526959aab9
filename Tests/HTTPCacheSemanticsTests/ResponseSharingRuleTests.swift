import Foundation
import Testing
@testable import HTTPCacheSemantics

/// Coalescing: a response obtained for one caller is handed to another waiter only when the cache could have
/// stored it and served it to that waiter (RFC 9111 §3, §3.5, §4.1).
@Suite struct ResponseSharingRuleTests {
    struct Case: Sendable, CustomStringConvertible {
        var response: [String]
        var mode: CacheMode
        var requestURL = "http://h/a"
        var otherURL = "http://h/a"
        var request: [String] = []
        var other: [String] = []
        var shared: Bool
        var description: String { "\(response) \(mode) \(requestURL)\(request) → \(otherURL)\(other)" }
    }

    static let cases: [Case] = [
        Case(response: ["Cache-Control: max-age=60"], mode: .shared, shared: true),
        Case(response: ["Cache-Control: no-store, private", "Set-Cookie: id=1"], mode: .shared, shared: false),
        Case(response: ["Cache-Control: no-store"], mode: .private, shared: false),
        Case(response: ["Cache-Control: NO-STORE"], mode: .shared, shared: false),
        Case(response: ["Cache-Control: private, max-age=60", "Set-Cookie: id=1"], mode: .shared, shared: false),
        Case(response: ["Cache-Control: private, max-age=60"], mode: .private, shared: true),
        Case(response: ["Cache-Control: max-age=60", "Set-Cookie: id=1"], mode: .shared, shared: false),  // one client's cookie
        Case(response: ["Cache-Control: max-age=60", "Set-Cookie: id=1"], mode: .private, shared: true),  // §7.3: origin's call
        Case(response: ["Cache-Control: public, max-age=60", "Set-Cookie: id=1"], mode: .shared, shared: true),
        Case(response: ["Cache-Control: max-age=60"], mode: .shared, request: ["Authorization: Bearer a"],
             other: ["Authorization: Bearer a"], shared: false),
        Case(response: ["Cache-Control: public, max-age=60"], mode: .shared, request: ["Authorization: Bearer a"],
             other: ["Authorization: Bearer b"], shared: true),
        Case(response: ["Cache-Control: max-age=60"], mode: .private, requestURL: "http://alice:pw@h/a",
             otherURL: "http://bob:pw@h/a", shared: false),
        Case(response: ["Cache-Control: max-age=60"], mode: .private, requestURL: "http://alice:pw@h/a",
             otherURL: "http://alice:pw@h/a", shared: true),
        Case(response: ["Cache-Control: max-age=60", "Vary: Cookie"], mode: .private, request: ["Cookie: a=1"],
             other: ["Cookie: a=2"], shared: false),
        Case(response: ["Cache-Control: max-age=60", "Vary: *"], mode: .private, shared: false),
    ]

    @Test(arguments: cases)
    func waiterGetsOnlyWhatTheCacheCouldServeIt(_ c: Case) throws {
        let request = CacheRequest(url: try #require(URL(string: c.requestURL)), headers: Fixture.headers(c.request))
        let other = CacheRequest(url: try #require(URL(string: c.otherURL)), headers: Fixture.headers(c.other))
        let response = CacheResponse(status: 200, headers: Fixture.headers(c.response))
        let options = EvaluationOptions(mode: c.mode, keySecret: Fixture.secret([1, 2, 3]))
        #expect(RFC9111.mayShare(response: response, obtainedFor: request, with: other, options: options) == c.shared)
    }
}
