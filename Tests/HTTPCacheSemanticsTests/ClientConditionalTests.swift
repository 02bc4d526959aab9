import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9111 §4.3.2: the cache answers the client's own If-None-Match / If-Modified-Since from a stored response;
/// RFC 9110 §15.4.5: the fields of that 304.
@Suite struct ClientConditionalTests {
    struct Case: Sendable, CustomStringConvertible {
        var request: [String]
        var stored: [String] = ["ETag: \"v1\"", "Last-Modified: \(Fixture.date(-3600))"]
        var status = 200
        var expected: Bool
        var description: String { "\(request) on \(status) \(stored) → \(expected)" }
    }

    static let cases: [Case] = [
        Case(request: ["If-None-Match: \"v1\""], expected: true),
        Case(request: ["If-None-Match: W/\"v1\""], expected: true),                 // weak comparison
        Case(request: ["If-None-Match: \"a\", \"v1\""], expected: true),
        Case(request: ["If-None-Match: \"a\"", "If-None-Match: \"v1\""], expected: true),
        Case(request: ["If-None-Match: *"], expected: true),
        Case(request: ["If-None-Match: \"v2\""], expected: false),
        // If-None-Match takes precedence over a matching If-Modified-Since.
        Case(request: ["If-None-Match: \"v2\"", "If-Modified-Since: \(Fixture.date(0))"], expected: false),
        Case(request: ["If-Modified-Since: \(Fixture.date(0))"], expected: true),
        Case(request: ["If-Modified-Since: \(Fixture.date(-3600))"], expected: true),   // equal is not modified
        Case(request: ["If-Modified-Since: \(Fixture.date(-7200))"], expected: false),  // earlier than Last-Modified
        // Without Last-Modified the stored Date (t0) stands in.
        Case(request: ["If-Modified-Since: \(Fixture.date(10))"], stored: ["ETag: \"v1\""], expected: true),
        Case(request: ["If-Modified-Since: \(Fixture.date(-10))"], stored: ["ETag: \"v1\""], expected: false),
        // RFC 850 form of the same instant.
        Case(request: ["If-Modified-Since: Sunday, 06-Nov-94 08:49:37 GMT"],
             stored: ["Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT"], expected: true),
        Case(request: ["If-Modified-Since: Sun, 06 Nov 1994 08:49:37 UTC"],
             stored: ["Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT"], expected: false),  // invalid date: absent
        Case(request: ["If-None-Match: \"v1\""], status: 404, expected: false),           // not a 2xx
        Case(request: ["If-None-Match: \"v1\""], status: 206, expected: false),
        Case(request: [], expected: false),
    ]

    @Test(arguments: cases)
    func clientPreconditions(c: Case) {
        let stored = Fixture.stored(Fixture.headers(c.stored), status: c.status)
        #expect(RFC9111.answersNotModified(request: Fixture.request(Fixture.headers(c.request)), stored: stored) == c.expected)
    }

    @Test func notModifiedCarriesTheValidatorAndCacheFieldsOnly() {
        let stored = Fixture.stored(Fixture.headers([
            "Cache-Control: max-age=600", "ETag: \"v1\"", "Last-Modified: \(Fixture.date(-3600))", "Vary: Accept",
            "Content-Type: text/plain", "Content-Length: 5", "Expires: \(Fixture.date(600))", "X-Custom: 1",
            "Content-Location: /a", "Connection: close",
        ]))
        let headers = RFC9111.notModifiedHeaders(stored, now: Fixture.at(30))
        #expect(headers.first("ETag") == "\"v1\"")
        #expect(headers.first("Cache-Control") == "max-age=600")
        #expect(headers.first("Vary") == "Accept")
        #expect(headers.first("Date") == Fixture.date(0))
        #expect(headers.first("Expires") == Fixture.date(600))
        #expect(headers.first("Content-Location") == "/a")
        #expect(headers.first("Age") == "30")
        for absent in ["Content-Type", "Content-Length", "X-Custom", "Last-Modified", "Connection"] {
            #expect(!headers.contains(absent), "\(absent)")
        }
        let lastModifiedOnly = Fixture.stored(Fixture.headers(["Last-Modified: \(Fixture.date(-3600))"]))
        #expect(RFC9111.notModifiedHeaders(lastModifiedOnly, now: Fixture.t0).first("Last-Modified") == Fixture.date(-3600))
    }
}
