import Testing
@testable import HTTPCacheSemantics

/// RFC 9110 §8.8.3: entity-tag syntax, strong and weak comparison, lists.
@Suite struct EntityTagTests {
    @Test(arguments: [
        ("\"xyzzy\"", "xyzzy", false), ("W/\"xyzzy\"", "xyzzy", true), ("\"\"", "", false), (" \"a\" ", "a", false),
        ("W/\"hmVytC+d\"", "hmVytC+d", true),
    ])
    func parses(text: String, opaque: String, weak: Bool) {
        let tag = EntityTag(parsing: text)
        #expect(tag?.opaque == opaque && tag?.isWeak == weak)
        #expect(tag?.description == (weak ? "W/" : "") + "\"" + opaque + "\"")
    }

    @Test(arguments: ["xyzzy", "\"abc", "abc\"", "w/\"a\"", "W/a", "\"a\"b\"", "\"a b\"", "", "W/"])
    func rejects(text: String) {
        #expect(EntityTag(parsing: text) == nil)
    }

    /// The comparison table of RFC 9110 §8.8.3.2.
    @Test(arguments: [
        ("W/\"1\"", "W/\"1\"", false, true), ("W/\"1\"", "W/\"2\"", false, false),
        ("W/\"1\"", "\"1\"", false, true), ("\"1\"", "\"1\"", true, true),
    ])
    func comparison(a: String, b: String, strong: Bool, weak: Bool) throws {
        let x = try #require(EntityTag(parsing: a)), y = try #require(EntityTag(parsing: b))
        #expect(x.strongMatches(y) == strong && y.strongMatches(x) == strong)
        #expect(x.weakMatches(y) == weak)
    }

    @Test(arguments: [
        ("fc8dc7b81dbc12d24165d521ae29fd1c", "fc8dc7b81dbc12d24165d521ae29fd1c", false),
        ("W/000073974-17EC3303DED", "000073974-17EC3303DED", true), ("\"q\"", "q", false),
    ])
    func lenient(text: String, opaque: String, weak: Bool) {
        let tag = EntityTag(lenient: text)
        #expect(tag?.opaque == opaque && tag?.isWeak == weak)
        #expect(EntityTag.of([("ETag", text)]) == tag)
    }

    @Test(arguments: ["", "W/", "a b", "a,b", "\"a"])
    func lenientStillRejects(text: String) {
        #expect(EntityTag(lenient: text) == nil)
    }

    @Test func lists() {
        let parsed = EntityTag.parseList("\"a,b\", W/\"c\", junk, \"d\"")
        #expect(parsed.tags.map(\.opaque) == ["a,b", "c", "d"] && !parsed.any)
        #expect(EntityTag.parseList(" * ").any)
        #expect(EntityTag.of([("ETag", "bogus"), ("etag", "\"ok\"")]) == EntityTag(opaque: "ok"))
        #expect(EntityTag.of([("ETag", "bo gus")]) == nil)
    }
}
