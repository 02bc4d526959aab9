import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9110 §9.3.3: a POST response with explicit freshness and Content-Location equal to its target URI may
/// answer a later GET.
@Suite struct PostContentLocationTests {
    static func answersGET(_ headers: [String], status: Int = 200, method: String = "POST", mode: CacheMode = .private) -> Bool {
        RFC9111.postResponseAnswersGET(request: Fixture.request(method: method),
                                       response: CacheResponse(status: status, headers: Fixture.headers(headers)), mode: mode)
    }

    @Test func freshPostWithItsOwnContentLocation() {
        #expect(Self.answersGET(["Cache-Control: max-age=3600", "Content-Location: https://example.com/a"]))
        #expect(Self.answersGET(["Cache-Control: max-age=3600", "Content-Location: /a"]))
        #expect(Self.answersGET(["Expires: \(Fixture.date(3600))", "Content-Location: HTTPS://EXAMPLE.com:443/a"]))
        #expect(Self.answersGET(["Cache-Control: s-maxage=60", "Content-Location: /a"], mode: .shared))
    }

    @Test func otherwiseNot() {
        #expect(!Self.answersGET(["Cache-Control: max-age=3600"]))
        #expect(!Self.answersGET(["Cache-Control: max-age=3600", "Content-Location: /b"]))
        #expect(!Self.answersGET(["Content-Location: /a"]))
        #expect(!Self.answersGET(["Cache-Control: s-maxage=60", "Content-Location: /a"], mode: .private))
        #expect(!Self.answersGET(["Cache-Control: max-age=3600", "Content-Location: /a"], status: 404))
        #expect(!Self.answersGET(["Cache-Control: max-age=3600", "Content-Location: /a"], method: "PUT"))
    }
}
