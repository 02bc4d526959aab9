import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 8941 §4.2.2: Structured Field Dictionary parsing; any error rejects the whole field.
@Suite struct StructuredFieldDictionaryTests {
    typealias SF = StructuredFieldDictionary

    @Test func parsesMembersOfEveryType() throws {
        let d = try #require(SF(parsing: #"a=1, b=-2.5, c="x \"y\"", d=tok/en:1, e=:aGk=:, f=?0, g, h=(1 "two" three);p=1, i;q;r=?1"#))
        #expect(d.members.map(\.key) == ["a", "b", "c", "d", "e", "f", "g", "h", "i"])
        #expect(d["a"] == .item(.integer(1), parameters: []))
        #expect(d["b"] == .item(.decimal(-2.5), parameters: []))
        #expect(d["c"] == .item(.string(#"x "y""#), parameters: []))
        #expect(d["d"] == .item(.token("tok/en:1"), parameters: []))
        #expect(d["e"] == .item(.byteSequence(Data("hi".utf8)), parameters: []))
        #expect(d["f"] == .item(.boolean(false), parameters: []))
        #expect(d["g"] == .item(.boolean(true), parameters: []))
        #expect(d["h"] == .innerList([.integer(1), .string("two"), .token("three")],
                                     parameters: [.init(key: "p", value: .integer(1))]))
        #expect(d["i"] == .item(.boolean(true), parameters: [.init(key: "q", value: .boolean(true)),
                                                             .init(key: "r", value: .boolean(true))]))
    }

    @Test func repeatedKeyKeepsItsPlaceAndTakesTheLastValue() throws {
        let d = try #require(SF(parsing: "max-age=600, a, max-age=5"))
        #expect(d.members.map(\.key) == ["max-age", "a"])
        #expect(d["max-age"]?.bareItem == .integer(5))
    }

    @Test func emptyAndSpacesAreAnEmptyDictionary() throws {
        #expect(try #require(SF(parsing: "")).members.isEmpty)
        #expect(try #require(SF(parsing: "   ")).members.isEmpty)
        #expect(try #require(SF(parsing: "  a=1  ")).members.count == 1)
        #expect(try #require(SF(parsing: "a=1 ,\tb=2")).members.count == 2)
    }

    @Test(arguments: [
        "max-age=10000, &&&&&", "MaX-aGe=3600", "max-age =100", "max-age= 100", "a=1,", ",a=1", "a=1,,b=2",
        "a=1 b=2", "a=\"unterminated", "a=\"bad\\x\"", "a=1234567890123456", "a=1.2345", "a=1234567890123.5", "a=1.",
        "a=?2", "a=:not base64!:", "a=(1 2", "a=(1,2)", "1a=1", "a=-", "a=\"caf\u{E9}\"", "a=1;", "a=1;B=2",
    ])
    func rejectsInvalidFields(text: String) {
        #expect(SF(parsing: text) == nil)
    }

    @Test func severalLinesAreOneField() throws {
        let headers = HTTPHeaders([("CDN-Cache-Control", "max-age=60"), ("cdn-cache-control", "no-cache")])
        let d = try #require(SF(headers: headers, name: "CDN-Cache-Control"))
        #expect(d.members.map(\.key) == ["max-age", "no-cache"])
        #expect(SF(headers: headers, name: "Other") == nil)
    }
}
