import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9111 §4.1 with `Vary: Accept-Language`: values that mean the same (order, case, whitespace, `q=1`) match;
/// a differing one still matches when its most preferred language is the stored `Content-Language`.
@Suite struct VaryAcceptLanguageTests {
    static func stored(_ acceptLanguage: String, contentLanguage: String? = nil) -> StoredResponse {
        var headers = HTTPHeaders([("Cache-Control", "max-age=5000"), ("Vary", "Accept-Language")])
        if let contentLanguage { headers.add("Content-Language", contentLanguage) }
        return Fixture.stored(headers, varying: HTTPHeaders([("Accept-Language", acceptLanguage)]))
    }

    static func matches(_ stored: StoredResponse, _ acceptLanguage: String) -> Bool {
        RFC9111.matches(stored: stored, request: Fixture.request(HTTPHeaders([("Accept-Language", acceptLanguage)])))
    }

    @Test(arguments: ["de, en", "EN, DE", " en ,   de", "en;q=1, de;q=1.000", "De,En"])
    func equivalentValuesMatch(value: String) {
        #expect(Self.matches(Self.stored("en, de"), value))
        let key = { RFC9111.secondaryKey(vary: Self.stored("en, de").response.headers, request: HTTPHeaders([("Accept-Language", $0)])) }
        #expect(key(value) == key("en, de"))
    }

    @Test(arguments: ["en", "en, de;q=0.5", "fr", "en, de, fr", "en;q=0.5, de;q=0.9"])
    func differentPreferencesDoNotMatch(value: String) {
        #expect(!Self.matches(Self.stored("en, de"), value))
    }

    @Test func theStoredContentLanguageIsSelectedByQuality() {
        let stored = Self.stored("en, de", contentLanguage: "de")
        #expect(Self.matches(stored, "fr;q=0.5, de;q=1.0"))
        #expect(Self.matches(stored, "de-CH;q=0.2, de"))
        #expect(!Self.matches(stored, "fr;q=1.0, de;q=0.5"))
        #expect(!Self.matches(stored, "fr"))
        #expect(Self.matches(Self.stored("en", contentLanguage: "de-DE"), "de"))      // basic filtering: prefix
        #expect(!Self.matches(Self.stored("en", contentLanguage: "de, en"), "de"))     // several languages: no guess
        #expect(!Self.matches(Self.stored("en", contentLanguage: "de"), "de;q=0"))
    }

    @Test(arguments: [("1", 1000), ("1.0", 1000), ("1.000", 1000), ("0", 0), ("0.5", 500), ("0.123", 123), ("0.", 0)])
    func qvalues(text: String, weight: Int) {
        #expect(RFC9111.qvalue(text) == weight)
    }

    @Test(arguments: ["1.5", "2", "0.1234", ".5", "-1", "0,5", "", "1.001"])
    func invalidQvalues(text: String) {
        #expect(RFC9111.qvalue(text) == nil)
    }

    @Test func normalisedForm() {
        #expect(RFC9111.normalizedAcceptLanguage(["EN;q=0.5, de", "fr;q=0.050, it;q=0"]) == "de,en;q=0.5,fr;q=0.05,it;q=0")
    }

    @Test func unparseableValuesAreComparedAsTheyAre() {
        #expect(RFC9111.normalizedAcceptLanguage(["en;q=2"]) == nil)
        #expect(RFC9111.normalizedAcceptLanguage(["en, en"]) == nil)
        #expect(Self.matches(Self.stored("en;q=x"), "en;q=x"))
        #expect(!Self.matches(Self.stored("en;q=x"), "EN;q=x"))
    }
}
