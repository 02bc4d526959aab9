import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9110 §5.6.7: the three HTTP-date formats, invalid dates, IMF-fixdate output.
@Suite struct HTTPDateTests {
    /// 784111777 = Sun, 06 Nov 1994 08:49:37 GMT (the RFC's example).
    static let example: TimeInterval = 784_111_777

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",     // IMF-fixdate
        "Sunday, 06-Nov-94 08:49:37 GMT",    // obsolete RFC 850
        "Sun Nov  6 08:49:37 1994",          // asctime
        "  Sun, 06 Nov 1994 08:49:37 GMT ",  // surrounding spaces (outside the field value)
        "Mon, 06 Nov 1994 08:49:37 GMT",     // wrong weekday is not checked
    ])
    func parsesAllFormats(text: String) {
        #expect(HTTPDate.parse(text)?.timeIntervalSince1970 == Self.example)
    }

    @Test(arguments: [
        "", "0", "-1", "now", "Sun, 06 Nov 1994", "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT",
        "Sun, 06 Nov 1994 08:61:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 199 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT extra", "Sun, 06 Nov 1994 08:49:37 +0200", "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49 GMT", "Sun, 06 Nov 1994 8:49:37:01 GMT", "1994-11-06T08:49:37Z",
        "Thu, 01 Dec 1994 16:00:00 GMT, Fri, 02 Dec 1994 16:00:00 GMT",
        "Sun, 06 Nov 99999999999999999999999 08:49:37 GMT", "Sun, 99999999999999999999999 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 0000000000000000000008:49:37 GMT",
    ])
    func rejectsInvalid(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test(arguments: [
        ("Thursday, 01-Jan-70 00:00:00 GMT", 0.0),
        ("Friday, 01-Jan-60 00:00:00 GMT", 2_840_140_800.0),  // two-digit year 60 → 2060
        ("Sat, 29 Feb 2020 12:00:00 GMT", 1_582_977_600.0),   // leap day
        ("Sat Aug 29 19:44:25 2015", 1_440_877_465.0),
        ("Wed, 31 Dec 2014 23:59:60 GMT", 1_420_070_400.0),   // leap second reads as the next second
    ])
    func specificInstants(text: String, expected: TimeInterval) {
        #expect(HTTPDate.parse(text)?.timeIntervalSince1970 == expected)
    }

    @Test func formatsIMFFixdate() {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: Self.example)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: Self.example + 0.9)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        let early = HTTPDate.parse("Mon, 01 Jan 0099 00:00:00 GMT")
        #expect(early.map(HTTPDate.format)?.hasSuffix(", 01 Jan 0099 00:00:00 GMT") == true)  // year padded to 4 digits
        #expect(early.flatMap { HTTPDate.parse(HTTPDate.format($0)) } == early)
    }

    @Test func formatClampsExtremeDates() {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: .infinity)) == "Fri, 31 Dec 9999 23:59:59 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: -.infinity)).hasSuffix("01 Jan 0001 00:00:00 GMT"))
        #expect(HTTPDate.format(Date(timeIntervalSince1970: .nan)) == "Thu, 01 Jan 1970 00:00:00 GMT")
    }

    @Test func roundTripsOverManyInstants() {
        var seconds: TimeInterval = 0
        for _ in 0..<500 {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(HTTPDate.parse(HTTPDate.format(date)) == date)
            seconds += 7_654_321
        }
    }
}
