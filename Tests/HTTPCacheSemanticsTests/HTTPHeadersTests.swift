import Testing
@testable import HTTPCacheSemantics

@Suite struct HTTPHeadersTests {
    @Test func lookupIgnoresCaseAndKeepsDuplicates() {
        var h: HTTPHeaders = [("Cache-Control", " max-age=60 "), ("ETag", "\"a\""), ("cache-control", "private")]
        #expect(h["CACHE-CONTROL"] == "max-age=60, private")
        #expect(h.values(for: "etag") == ["\"a\""])
        #expect(h.count == 3)
        h.set("Cache-Control", "no-store")
        #expect(h.values(for: "cache-control") == ["no-store"])
        #expect(h.fields.first?.name == "Cache-Control")
        h.remove("ETAG")
        #expect(!h.contains("etag"))
        #expect(h.pairs == [["Cache-Control", "no-store"]])
    }

    @Test(arguments: [("Etag", "ETag", true), ("a", "b", false), ("Vary", "vary ", false), ("X-Ä", "x-ä", false)])
    func namesEqual(a: String, b: String, equal: Bool) {
        #expect(HTTPHeaders.namesEqual(a, b) == equal)
    }
}
