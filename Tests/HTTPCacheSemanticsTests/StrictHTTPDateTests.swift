import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9110 §5.6.7: only the three HTTP-date formats, with their exact spacing, digits and `GMT` (names in any case,
/// RFC 9111 §4.2); an invalid `Expires` makes a response stale (RFC 9111 §5.3), an invalid `Date` / `Last-Modified`
/// / `If-Modified-Since` counts as absent.
@Suite struct StrictHTTPDateTests {
    @Test(arguments: [
        "Thu, 18 Aug 2050 02:01:18 UTC",     // UTC instead of GMT
        "Thu, 18 Aug 50 02:01:18 GMT",       // two-digit year outside the RFC 850 form
        "Thu 18 Aug 2050 02:01:18 GMT",      // missing comma
        "Thu, 18  Aug  2050 02:01:18 GMT",   // doubled spaces
        "Thu, 18-Aug-2050 02:01:18 GMT",     // dashes in an IMF-fixdate
        "Thu, 18 Aug 2050 02.01.18 GMT",     // periods in the time
        "Thu, 18 Aug 2050 2:01:18 GMT",      // one-digit hour
        "Thu, 18 Aug 2050 02:1:18 GMT",      // one-digit minute
        "Thu, 8 Aug 2050 02:01:18 GMT",      // one-digit day in an IMF-fixdate
        "18 Aug 2050 02:01:18 GMT",          // weekday missing
        "Thu, 18 Aug 2050 02:01:18 GMT ,",
        "Thu,\t18 Aug 2050 02:01:18 GMT",    // tab instead of SP
        "Thursday, 18-Aug-2050 02:01:18 GMT",  // four-digit year in the RFC 850 form
        "Thursday, 18 Aug 50 02:01:18 GMT",  // spaces in the RFC 850 form
        "Thursday 18-Aug-50 02:01:18 GMT",
        "Thurs, 18-Aug-50 02:01:18 GMT",
        "Thu Aug 18 02:01:18 50",            // asctime with a two-digit year
        "Thu Aug 18 02:01:18 2050 GMT",
        "Thu Aug 8 02:01:18 2050",           // asctime one-digit day without its padding space
        "Thu  Aug 18 02:01:18 2050",
        "Mon, 01-Jan-2010 12:00:00 GMT",     // seen in the real-world fixture
        "Fri, 21 Jan 2022 16:19:12 UTC",
        "02/04/2022 05:23:42",
        "Sat,  29 Aug 2015 19:45:00 GMT",
    ])
    func rejectsEverythingOutsideTheThreeFormats(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test(arguments: [
        ("Thu, 18 Aug 2050 02:01:18 GMT", 2_544_400_878.0),
        ("Thursday, 18-Aug-50 02:01:18 GMT", 2_544_400_878.0),
        ("Thu Aug 18 02:01:18 2050", 2_544_400_878.0),
        ("Sat Aug  6 02:01:18 2050", 2_543_364_078.0),
        // RFC 9111 §4.2: a cache recipient matches day, month and zone names case-insensitively.
        ("THU, 18 Aug 2050 02:01:18 GMT", 2_544_400_878.0),
        ("Thu, 18 AUG 2050 02:01:18 GMT", 2_544_400_878.0),
        ("Thu, 18 Aug 2050 02:01:18 gMT", 2_544_400_878.0),
        ("THURSDAY, 18-aug-50 02:01:18 gmt", 2_544_400_878.0),
        ("tHU aUG 18 02:01:18 2050", 2_544_400_878.0),
    ])
    func acceptsTheThreeFormats(text: String, expected: TimeInterval) {
        #expect(HTTPDate.parse(text)?.timeIntervalSince1970 == expected)
    }

    /// Each invalid `Expires` of the list above, with a valid `Date`: the response is stale at once.
    @Test(arguments: ["Thu, 18 Aug 2050 02:01:18 UTC", "Thu, 18 Aug 50 02:01:18 GMT", "Thu 18 Aug 2050 02:01:18 GMT",
                      "Thu, 18  Aug  2050 02:01:18 GMT", "Thu, 18-Aug-2050 02:01:18 GMT", "Thu, 18 Aug 2050 2:01:18 GMT"])
    func invalidExpiresIsStale(expires: String) {
        let stored = Fixture.stored([("Date", Fixture.date(0)), ("Expires", expires)])
        #expect(RFC9111.freshnessLifetime(stored, options: EvaluationOptions(mode: .private)) == 0)
        #expect(!RFC9111.isFresh(stored, now: Fixture.t0, options: EvaluationOptions(mode: .shared)))
    }

    /// An invalid `Date` is absent: apparent age comes from `response_time`, not from a misread date.
    @Test func invalidDateIsAbsent() {
        let stored = Fixture.stored([("Date", "Thu, 01 Jan 2015 00:00:00 UTC"), ("Cache-Control", "max-age=60")])
        #expect(RFC9111.correctedInitialAge(stored) == 0)
        #expect(RFC9111.isFresh(stored, now: Fixture.t0.addingTimeInterval(30), options: EvaluationOptions(mode: .private)))
    }

    /// An invalid `Last-Modified` gives no heuristic freshness and is not sent as `If-Modified-Since`.
    @Test func invalidLastModifiedIsAbsent() {
        let stored = Fixture.stored([("Date", Fixture.date(0)),
                                        ("Last-Modified", "Fri, 21 Jan 2022 16:19:12 UTC")])
        #expect(RFC9111.freshnessLifetime(stored, options: EvaluationOptions(mode: .private)) == 0)
        #expect(RFC9111.conditionalRequest(for: Fixture.request(), stored: stored) == nil)
    }

    /// An invalid `If-Modified-Since` from the caller is ignored (RFC 9110 §13.1.3): not a conditional request.
    @Test func invalidIfModifiedSinceIsAbsent() {
        let stored = Fixture.stored([("Date", Fixture.date(0)), ("Last-Modified", Fixture.date(-3600))])
        var request = Fixture.request()
        request.headers.set("If-Modified-Since", "Thu, 01-Jan-2099 00:00:00 GMT")
        #expect(RFC9111.isNotModified(request: request, stored: stored) == nil)
        request.headers.set("If-Modified-Since", HTTPDate.format(Fixture.t0))
        #expect(RFC9111.isNotModified(request: request, stored: stored) == true)
    }
}
