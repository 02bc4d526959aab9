import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9111 §5.2 (Cache-Control), §1.2.2 (delta-seconds), §5.4 (Pragma): parsing, duplicates, bad input.
@Suite struct CacheControlTests {
    @Test func parsesEveryResponseDirective() {
        let cc = CacheControl(parsing: "public, private=\"Set-Cookie, X-A\", no-cache=\"Set-Cookie\", no-store, "
            + "max-age=60, s-maxage=120, must-revalidate, proxy-revalidate, must-understand, no-transform, immutable, "
            + "stale-while-revalidate=30, stale-if-error=600")
        #expect(cc.isPublic && cc.isPrivate && cc.noStore && cc.mustRevalidate && cc.proxyRevalidate)
        #expect(cc.mustUnderstand && cc.noTransform && cc.immutable)
        #expect(cc.privateFields == ["set-cookie", "x-a"])
        #expect(cc.noCacheFields == ["set-cookie"] && !cc.noCache)
        #expect(cc.maxAge == 60 && cc.sMaxAge == 120)
        #expect(cc.staleWhileRevalidate == 30 && cc.staleIfError == 600)
        #expect(cc.problems.isEmpty && cc.extensions.isEmpty)
    }

    @Test func parsesEveryRequestDirective() {
        let cc = CacheControl(parsing: "max-age=5, max-stale=10, min-fresh=3, no-cache, no-store, no-transform, only-if-cached, stale-if-error=7")
        #expect(cc.maxAge == 5 && cc.maxStale == .seconds(10) && cc.minFresh == 3)
        #expect(cc.noCache && cc.noStore && cc.noTransform && cc.onlyIfCached && cc.staleIfError == 7)
        #expect(CacheControl(parsing: "max-stale").maxStale == .any)
    }

    @Test(arguments: [
        ("max-age=60", 60), ("MAX-AGE=60", 60), ("Max-Age=\"60\"", 60), (" max-age=60 ", 60),
        ("max-age=0", 0), ("max-age=-1", 0), ("max-age=abc", 0), ("max-age=", 0), ("max-age", 0),
        ("max-age=1.5", 0), ("max-age=+5", 0), ("max-age=99999999999999999999", 2_147_483_648),
        ("max-age=2147483648", 2_147_483_648), ("max-age=60, max-age=30", 0), ("max-age=30, max-age=abc", 0),
        ("max-age=\"60", 60),
    ] as [(String, Int)])
    func maxAgeValues(text: String, expected: Int) {
        #expect(CacheControl(parsing: text).maxAge == expected)
    }

    @Test(arguments: [
        ("max-age=-1", true), ("max-age=60, max-age=30", true), ("max-age=60", false), ("max-age=60, max-age=60", false),
        ("no-store=1", true), ("max-age=\"60", true), ("min-fresh=x", true), ("stale-if-error=-3", true),
    ])
    func recordsProblems(text: String, hasProblem: Bool) {
        #expect(CacheControl(parsing: text).problems.isEmpty == !hasProblem)
    }

    @Test func invalidOptionalDirectivesAreIgnored() {
        let cc = CacheControl(parsing: "min-fresh=x, max-stale=-1, stale-while-revalidate=soon, stale-if-error=")
        #expect(cc.minFresh == nil && cc.maxStale == nil && cc.staleWhileRevalidate == nil && cc.staleIfError == nil)
        #expect(cc.problems.count == 4)
    }

    @Test func duplicatesKeepMostRestrictive() {
        let cc = CacheControl(parsing: "min-fresh=5, min-fresh=9, max-stale, max-stale=100, max-stale=50, s-maxage=10, s-maxage=10")
        #expect(cc.minFresh == 9 && cc.maxStale == .seconds(50) && cc.sMaxAge == 10)
    }

    @Test func repeatedLinesAreOneList() {
        let headers: HTTPHeaders = [("Cache-Control", "max-age=600"), ("cache-control", "no-store"), ("Cache-Control", "max-age=60")]
        let cc = CacheControl(headers: headers)
        #expect(cc.noStore && cc.maxAge == 0)  // differing max-age values: stale (RFC 9111 §4.2.1)
    }

    @Test func quotedCommasStayInsideArgument() {
        let cc = CacheControl(parsing: "private=\"a, b\", max-age=5")
        #expect(cc.privateFields == ["a", "b"] && cc.maxAge == 5)
        let weird = CacheControl(parsing: "foo=\"x,\\\"y\", bar")
        #expect(weird.extensions == [.init(name: "foo", value: "x,\"y"), .init(name: "bar", value: nil)])
    }

    @Test func misspeltDirectivesAreExtensions() {
        let cc = CacheControl(parsing: "private, max-age=1800, s-max-age=1800, nocache")
        #expect(cc.sMaxAge == nil && !cc.noCache && cc.maxAge == 1800)
        #expect(cc.extensions.map(\.name) == ["s-max-age", "nocache"])
    }

    @Test func noCacheQualifiedForms() {
        #expect(CacheControl(parsing: "no-cache=Set-Cookie").noCacheFields == ["set-cookie"])
        #expect(CacheControl(parsing: "no-cache=\"\"").noCache)
        let both = CacheControl(parsing: "private, no-cache, no-cache=Set-Cookie, no-store, proxy-revalidate")
        #expect(both.noCache && both.noCacheFields == ["set-cookie"] && both.noStore)
    }

    @Test(arguments: [
        ([("Pragma", "no-cache")], true), ([("Pragma", "No-Cache")], true), ([("Pragma", "x, no-cache")], true),
        ([("Pragma", "no-cache"), ("Cache-Control", "max-age=5")], false), ([("Pragma", "nocache")], false),
    ] as [([(String, String)], Bool)])
    func pragmaIsNoCacheOnlyWithoutCacheControl(pairs: [(String, String)], expected: Bool) {
        #expect(CacheControl.request(HTTPHeaders(pairs)).noCache == expected)
        #expect(CacheControl.response(HTTPHeaders(pairs)).noCache == expected)
    }

    @Test func emptyAndGarbageValues() {
        #expect(CacheControl(parsing: "") == CacheControl())
        #expect(CacheControl(parsing: ",,, ,") == CacheControl())
        let garbage = CacheControl(parsing: "=5, ===, \"")
        #expect(!garbage.noStore && garbage.maxAge == nil)
    }
}
