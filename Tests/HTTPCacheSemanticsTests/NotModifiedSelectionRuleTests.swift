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
}
