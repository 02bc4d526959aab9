import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9213: a cache with a target list obeys the first valid targeted field instead of Cache-Control and
/// Expires; an invalid one is ignored as a whole.
@Suite struct TargetedCacheControlTests {
    static let cdn = EvaluationOptions(mode: .shared, targetedFields: ["CDN-Cache-Control"])

    struct Case: Sendable, CustomStringConvertible {
        var headers: [String]
        var storable: Bool
        var freshAt: TimeInterval? = nil   // seconds after t0 at which the stored response must still be fresh
        var staleAt: TimeInterval? = nil   // … and must be stale
        var kindAt10: Kind? = nil
        var description: String { headers.joined(separator: " | ") }
    }

    static let cases: [Case] = [
        Case(headers: ["CDN-Cache-Control: max-age=3600"], storable: true, freshAt: 3000, staleAt: 3601),
        Case(headers: ["CDN-Cache-Control: max-age=2147483648"], storable: true, freshAt: 86_400 * 365),
        Case(headers: ["CDN-Cache-Control: max-age=99999999999"], storable: true, freshAt: 86_400 * 365),
        Case(headers: ["CDN-Cache-Control: max-age=3600", "Age: 7200"], storable: true, staleAt: 0),
        Case(headers: ["CDN-Cache-Control: max-age=0"], storable: true, staleAt: 0),
        Case(headers: ["CDN-Cache-Control: foobar, max-age=3600"], storable: true, freshAt: 3000),
        Case(headers: ["CDN-Cache-Control: max-age=3600", "Expires: \(Fixture.date(-10000))"], storable: true, freshAt: 3000),
        Case(headers: ["CDN-Cache-Control: max-age=3600", "Expires: 0"], storable: true, freshAt: 3000),
        Case(headers: ["CDN-Cache-Control: max-age=0", "Expires: \(Fixture.date(10000))"], storable: true, staleAt: 0),
        Case(headers: ["Cache-Control: max-age=1", "CDN-Cache-Control: max-age=3600"], storable: true, freshAt: 3000),
        Case(headers: ["Cache-Control: max-age=3600", "CDN-Cache-Control: max-age=1"], storable: true, staleAt: 2),
        Case(headers: ["CDN-Cache-Control: private", "Cache-Control: max-age=10000", "Expires: \(Fixture.date(10000))"],
             storable: false),
        Case(headers: ["CDN-Cache-Control: no-cache", "Cache-Control: max-age=10000", "Expires: \(Fixture.date(10000))"],
             storable: true, kindAt10: .fetch),
        Case(headers: ["Cache-Control: max-age=10000", "CDN-Cache-Control: no-store", "Expires: \(Fixture.date(10000))"],
             storable: false),
        Case(headers: ["Cache-Control: no-store", "CDN-Cache-Control: max-age=10000"], storable: true, freshAt: 9000),
        // Invalid (unknown type / wrong type): ignored as a whole, Cache-Control applies.
        Case(headers: ["CDN-Cache-Control: max-age=10000, &&&&&", "Cache-Control: no-store"], storable: false),
        Case(headers: ["CDN-Cache-Control: max-age=\"10000\"", "Cache-Control: no-store"], storable: false),
        Case(headers: ["Cache-Control: max-age=1", "CDN-Cache-Control: max-age =100"], storable: true, staleAt: 2),
        Case(headers: ["Cache-Control: max-age=1", "CDN-Cache-Control: "], storable: true, staleAt: 2),  // empty
    ]

    @Test(arguments: cases)
    func targetedFieldDecides(c: Case) {
        let headers = Fixture.headers(c.headers)
        let request = Fixture.request()
        let response = CacheResponse(status: 200, headers: headers)
        let storability = RFC9111.storability(request: request, response: response, mode: .shared,
                                              targetedFields: Self.cdn.targetedFields)
        #expect(storability.isStorable == c.storable, "\(storability)")
        let stored = Fixture.stored(headers)
        if let at = c.freshAt { #expect(RFC9111.isFresh(stored, now: Fixture.at(at), options: Self.cdn)) }
        if let at = c.staleAt { #expect(!RFC9111.isFresh(stored, now: Fixture.at(at), options: Self.cdn)) }
        if let kind = c.kindAt10 {
            #expect(Kind(RFC9111.evaluate(request: request, stored: stored, now: Fixture.at(10), options: Self.cdn)) == kind)
        }
    }

    @Test func withoutATargetListTheFieldIsIgnored() {
        let stored = Fixture.stored(Fixture.headers(["Cache-Control: max-age=3600", "CDN-Cache-Control: max-age=1"]))
        #expect(RFC9111.isFresh(stored, now: Fixture.at(10), options: EvaluationOptions(mode: .shared)))
    }

    @Test func firstValidTargetInListOrderWins() {
        let headers = Fixture.headers(["A-Cache-Control: max-age=\"bad\"", "B-Cache-Control: max-age=60",
                                       "CDN-Cache-Control: max-age=5"])
        let cc = CacheControl.targeted(headers, targets: ["A-Cache-Control", "B-Cache-Control", "CDN-Cache-Control"])
        #expect(cc?.maxAge == 60)
        #expect(CacheControl.targeted(headers, targets: []) == nil)
    }

    @Test func directivesMapLikeCacheControl() throws {
        let text = #"s-maxage=30, must-revalidate, proxy-revalidate, stale-while-revalidate=5, stale-if-error=9, public=?0, private="set-cookie, x", ext=1"#
        let dictionary = try #require(StructuredFieldDictionary(parsing: text))
        let cc = try #require(CacheControl(targeted: dictionary))
        #expect(cc.sMaxAge == 30 && cc.mustRevalidate && cc.proxyRevalidate)
        #expect(cc.staleWhileRevalidate == 5 && cc.staleIfError == 9)
        #expect(!cc.isPublic && cc.isPrivate && cc.privateFields == ["set-cookie", "x"])
        #expect(cc.extensions == [CacheControl.Extension(name: "ext", value: "1")])
        for wrongType in ["max-age=-1", "no-store=1", "max-age=1.5", "private=1"] {
            let parsed = try #require(StructuredFieldDictionary(parsing: wrongType))
            #expect(CacheControl(targeted: parsed) == nil, "\(wrongType)")
        }
    }
}
