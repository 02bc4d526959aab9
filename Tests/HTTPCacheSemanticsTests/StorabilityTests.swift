import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9111 §3 (storing responses), §3.3–3.5, §5.2.2.3 must-understand, §5.2.2.5 no-store, §5.2.2.7 private.
@Suite struct StorabilityTests {
    struct Case: Sendable, CustomStringConvertible {
        var method = "GET"
        var status = 200
        var response: [String]
        var request: [String] = []
        var mode: CacheMode = .private
        var ignore = false
        var store: Bool
        var reasonContains = ""
        var description: String { "\(method) \(status) \(response) \(request) \(mode) ignore=\(ignore)" }
    }

    static let cases: [Case] = [
        Case(response: ["Cache-Control: max-age=60"], store: true),
        Case(response: [], store: true),  // 200 is heuristically cacheable
        Case(method: "HEAD", response: ["Cache-Control: max-age=60"], store: true),
        Case(method: "POST", response: ["Cache-Control: max-age=60"], store: false, reasonContains: "POST"),
        Case(method: "get", response: ["Cache-Control: max-age=60"], store: false, reasonContains: "method"),
        Case(status: 100, response: [], store: false, reasonContains: "final"),
        Case(status: 304, response: ["ETag: \"a\""], store: false, reasonContains: "304"),
        Case(status: 206, response: ["Content-Range: bytes 0-9/100", "Cache-Control: max-age=60"], store: false, reasonContains: "partial content not supported"),
        // Invalid status codes (outside 100...599) are handled as a 5xx, never stored, whatever the freshness says.
        Case(status: 999, response: ["Cache-Control: max-age=600"], store: false, reasonContains: "outside 100-599"),
        Case(status: 600, response: ["Cache-Control: public, max-age=600"], store: false, reasonContains: "outside 100-599"),
        Case(status: 599, response: ["Cache-Control: public"], store: true),
        Case(response: ["Cache-Control: no-store"], store: false, reasonContains: "no-store"),
        Case(response: ["Cache-Control: private, no-store"], store: false, reasonContains: "no-store"),
        Case(response: ["Cache-Control: NO-STORE"], store: false, reasonContains: "no-store"),
        Case(response: ["Cache-Control: max-age=60", "Cache-Control: no-store"], store: false, reasonContains: "no-store"),
        Case(response: ["Cache-Control: max-age=60"], request: ["Cache-Control: no-store"], store: false, reasonContains: "request has no-store"),
        // must-understand: no-store ignored when the status is understood, refused when it is not.
        Case(response: ["Cache-Control: must-understand, no-store, max-age=60"], store: true),
        Case(status: 299, response: ["Cache-Control: must-understand, no-store, max-age=60"], store: false, reasonContains: "must-understand"),
        // private: fine in a private cache, refused in a shared one (qualified too).
        Case(response: ["Cache-Control: private, max-age=60"], store: true),
        Case(response: ["Cache-Control: private, max-age=60"], mode: .shared, store: false, reasonContains: "private"),
        Case(response: ["Cache-Control: private=\"Set-Cookie\", max-age=60"], mode: .shared, store: false, reasonContains: "private"),
        // Authorization in a shared cache (§3.5).
        Case(response: ["Cache-Control: max-age=60"], request: ["Authorization: Bearer x"], mode: .shared, store: false, reasonContains: "Authorization"),
        Case(response: ["Cache-Control: max-age=60"], request: ["Authorization: Bearer x"], store: true),
        Case(response: ["Cache-Control: public, max-age=60"], request: ["Authorization: Bearer x"], mode: .shared, store: true),
        Case(response: ["Cache-Control: must-revalidate, max-age=60"], request: ["Authorization: Bearer x"], mode: .shared, store: true),
        Case(response: ["Cache-Control: s-maxage=60"], request: ["Authorization: Bearer x"], mode: .shared, store: true),
        // Status codes: heuristic set stores by default; 302/307 and others need explicit freshness.
        Case(status: 404, response: [], store: true),
        Case(status: 410, response: [], store: true),
        Case(status: 501, response: [], store: true),
        Case(status: 302, response: [], store: false, reasonContains: "302"),
        Case(status: 307, response: [], store: false, reasonContains: "307"),
        Case(status: 302, response: ["Cache-Control: max-age=60"], store: true),
        Case(status: 307, response: ["Expires: Thu, 01 Jan 2099 00:00:00 GMT"], store: true),
        Case(status: 500, response: [], store: false, reasonContains: "500"),
        Case(status: 500, response: ["Cache-Control: max-age=5"], store: true),
        Case(status: 299, response: [], store: false, reasonContains: "not understood"),
        Case(status: 299, response: ["Cache-Control: public"], store: true),  // public: explicitly cacheable (RFC 9111 §3)
        Case(status: 299, response: ["Cache-Control: max-age=60"], store: true),
        Case(status: 999, response: ["Expires: 0"], store: false, reasonContains: "outside 100-599"),
        Case(status: 1000, response: ["Cache-Control: max-age=60"], store: false, reasonContains: "outside 100-599"),
        Case(status: 303, response: ["Cache-Control: public"], store: true),
        Case(status: 303, response: ["Cache-Control: private"], store: true),
        Case(status: 303, response: ["Cache-Control: private"], mode: .shared, store: false),
        Case(status: 303, response: ["Cache-Control: s-maxage=5"], store: false),
        Case(status: 303, response: ["Cache-Control: s-maxage=5"], mode: .shared, store: true),
        // Vary: * can never match.
        Case(response: ["Cache-Control: max-age=60", "Vary: *"], store: false, reasonContains: "Vary"),
        // Set-Cookie: a private cache stores it as any response (§7.3); a shared cache only when the origin made
        // the response everyone's (public, s-maxage), and never when it cannot read Cache-Control.
        Case(response: ["Cache-Control: max-age=60", "Set-Cookie: a=1"], store: true),
        Case(response: ["Cache-Control: max-age=60", "Set-Cookie: a=1"], mode: .shared, store: false, reasonContains: "cookie"),
        Case(response: ["Cache-Control: max-age=60", "set-cookie: a=1"], mode: .shared, store: false, reasonContains: "cookie"),
        Case(response: ["Cache-Control: public, max-age=60", "Set-Cookie: a=1"], mode: .shared, store: true),
        Case(response: ["Cache-Control: s-maxage=60", "Set-Cookie: a=1"], mode: .shared, store: true),
        Case(response: ["Cache-Control: max-age=60, must-revalidate", "Set-Cookie: a=1"], mode: .shared, store: false, reasonContains: "cookie"),
        Case(response: ["Set-Cookie: a=1"], mode: .shared, store: false, reasonContains: "cookie"),
        Case(response: ["Cache-Control: public, max-age=60", "Set-Cookie: a=1"], mode: .shared, ignore: true, store: false, reasonContains: "cookie"),
        Case(response: ["Set-Cookie: a=1"], ignore: true, store: true),
        // no-cache is storable: it only forces validation.
        Case(response: ["Cache-Control: no-cache"], store: true),
        // ignoreServerCacheControl: no-store and private are not read; status rules remain.
        Case(response: ["Cache-Control: no-store"], ignore: true, store: true),
        Case(response: ["Cache-Control: private"], mode: .shared, ignore: true, store: true),
        Case(status: 302, response: ["Cache-Control: max-age=60"], ignore: true, store: false),
        Case(response: [], request: ["Authorization: x"], mode: .shared, ignore: true, store: false, reasonContains: "Authorization"),
        Case(method: "POST", response: [], ignore: true, store: false),
    ]

    @Test(arguments: cases)
    func storability(c: Case) {
        let request = Fixture.request(Fixture.headers(c.request), method: c.method)
        let response = CacheResponse(status: c.status, headers: Fixture.headers(c.response))
        let result = RFC9111.storability(request: request, response: response, mode: c.mode, ignoreServerCacheControl: c.ignore)
        #expect(result.isStorable == c.store)
        if case .doNotStore(let reason) = result {
            #expect(!reason.isEmpty)
            #expect(c.reasonContains.isEmpty || reason.contains(c.reasonContains), "\(reason)")
        }
    }
}
