import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9111 §4.3.4: a 304 freshens only the stored responses its validator selects.
@Suite struct NotModifiedSelectionRuleTests {
    @Test(arguments: [
        (["ETag: \"A\""], ["ETag: \"B\"", "Content-Type: text/evil", "Set-Cookie: x=1"], false),
        (["ETag: \"A\""], ["ETag: \"A\""], true),
        (["ETag: \"A\""], ["etag: \"A\""], true),                  // field names are case-insensitive
        (["ETag: \"A\""], ["ETag: \"a\""], false),                 // entity tags are case-sensitive
        (["ETag: W/\"A\""], ["ETag: W/\"A\""], true),
        (["ETag: W/\"A\""], ["ETag: W/\"B\""], false),
        (["ETag: \"A\""], [], false),                              // no validator, stored one has one
        ([], [], true),                                           // neither has a validator
        (["Last-Modified: Mon, 01 Jan 2024 00:00:00 GMT"], ["Last-Modified: Tue, 02 Jan 2024 00:00:00 GMT"], false),
        (["Last-Modified: Mon, 01 Jan 2024 00:00:00 GMT"], ["Last-Modified: Mon, 01 Jan 2024 00:00:00 GMT"], true),
    ])
    func validatorDecidesSelection(stored: [String], notModified: [String], selected: Bool) {
        let candidate = Fixture.stored(Fixture.headers(stored + ["Cache-Control: max-age=0"]))
        let answer = CacheResponse(status: 304, headers: Fixture.headers(notModified))
        #expect(RFC9111.selectForFreshening([candidate], notModified: answer) == (selected ? [0] : []))
    }

    /// A 304 with no validator at all answers the cache's own conditional request: it selects the response whose
    /// validators that request carried, and only that one; a 304 naming another validator still selects nothing.
    @Test func notModifiedWithoutValidatorSelectsTheValidatedResponse() {
        let first = Fixture.stored(Fixture.headers(["ETag: \"A\"", "Vary: Accept", "Cache-Control: max-age=0"]))
        let second = Fixture.stored(Fixture.headers(["ETag: \"B\"", "Vary: Accept", "Cache-Control: max-age=0"]))
        let bare = CacheResponse(status: 304, headers: Fixture.headers(["Cache-Control: max-age=60"]))
        #expect(RFC9111.selectForFreshening([first, second], notModified: bare, validated: 1) == [1])
        #expect(RFC9111.selectForFreshening([first, second], notModified: bare, validated: nil) == [])
        #expect(RFC9111.selectForFreshening([first, second], notModified: bare, validated: 7) == [])
        let other = CacheResponse(status: 304, headers: Fixture.headers(["ETag: \"C\""]))
        #expect(RFC9111.selectForFreshening([first, second], notModified: other, validated: 1) == [])
    }
}
