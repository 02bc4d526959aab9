import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9110 §14.1–14.2: the `Range` header's grammar, and §14.4: `Content-Range` both ways.
@Suite struct RangeParsingTests {
    struct Case: Sendable, CustomStringConvertible {
        var lines: [String]
        var expected: RangeRequest?
        var description: String { "\(lines) → \(String(describing: expected))" }
    }

    static let cases: [Case] = [
        Case(lines: ["bytes=0-0"], expected: .single(.closed(first: 0, last: 0))),
        Case(lines: ["bytes=0-499"], expected: .single(.closed(first: 0, last: 499))),
        Case(lines: ["bytes=500-"], expected: .single(.openEnded(first: 500))),
        Case(lines: ["bytes=-500"], expected: .single(.suffix(length: 500))),
        Case(lines: ["bytes=-0"], expected: .single(.suffix(length: 0))),               // valid, never satisfiable
        Case(lines: ["BYTES=1-2"], expected: .single(.closed(first: 1, last: 2))),      // unit is case-insensitive
        Case(lines: ["  bytes=1-2\t"], expected: .single(.closed(first: 1, last: 2))),  // field OWS trimmed
        Case(lines: ["bytes=007-008"], expected: .single(.closed(first: 7, last: 8))),  // leading zeros
        Case(lines: ["bytes=5-5"], expected: .single(.closed(first: 5, last: 5))),
        Case(lines: ["bytes=0-1,5-9"], expected: .multiple([.closed(first: 0, last: 1), .closed(first: 5, last: 9)])),
        Case(lines: ["bytes=0-1 , -3"], expected: .multiple([.closed(first: 0, last: 1), .suffix(length: 3)])),
        Case(lines: ["bytes=0-1,,"], expected: .single(.closed(first: 0, last: 1))),    // empty list members
        Case(lines: ["bytes=,0-1"], expected: .single(.closed(first: 0, last: 1))),
        // Numbers beyond Int64 clamp: a first position that large is past any end, a last position means "to the end".
        Case(lines: ["bytes=0-99999999999999999999999"], expected: .single(.closed(first: 0, last: .max))),
        Case(lines: ["bytes=99999999999999999999999-"], expected: .single(.openEnded(first: .max))),
        Case(lines: ["bytes=-99999999999999999999999"], expected: .single(.suffix(length: .max))),
        Case(lines: ["bytes=9223372036854775807-"], expected: .single(.openEnded(first: .max))),
        // Invalid: the header is ignored (nil).
        Case(lines: ["bytes=5-3"], expected: nil),                 // last < first
        Case(lines: ["bytes=0-1,5-3"], expected: nil),             // one invalid member spoils the set
        Case(lines: ["bytes="], expected: nil),
        Case(lines: ["bytes=,"], expected: nil),
        Case(lines: ["bytes=-"], expected: nil),
        Case(lines: ["bytes=1"], expected: nil),
        Case(lines: ["bytes=a-b"], expected: nil),
        Case(lines: ["bytes=1-2-3"], expected: nil),
        Case(lines: ["bytes=+1-2"], expected: nil),
        Case(lines: ["bytes=-+2"], expected: nil),
        Case(lines: ["bytes=1 -2"], expected: nil),                // whitespace inside a member
        Case(lines: ["bytes= 1-2"], expected: nil),                // whitespace after "="
        Case(lines: ["bytes =1-2"], expected: nil),                // whitespace before "="
        Case(lines: ["bytes=٣-٤"], expected: nil),                 // non-ASCII digits
        Case(lines: ["items=0-1"], expected: nil),                 // unknown unit (§14.2)
        Case(lines: ["0-1"], expected: nil),
        Case(lines: [""], expected: nil),
        Case(lines: ["bytes=0-1", "bytes=2-3"], expected: nil),    // two Range lines
        Case(lines: [], expected: nil),
    ]

    @Test(arguments: cases)
    func parsesRangeHeader(_ c: Case) {
        let headers = HTTPHeaders(c.lines.map { ("Range", $0) })
        #expect(RFC9110.rangeRequest(headers) == c.expected)
    }

    struct ContentRangeCase: Sendable, CustomStringConvertible {
        var text: String
        var expected: ContentRange?
        var description: String { "\(text) → \(String(describing: expected))" }
    }

    static let contentRanges: [ContentRangeCase] = [
        ContentRangeCase(text: "bytes 0-499/1234", expected: ContentRange(range: ByteRange(first: 0, last: 499), completeLength: 1234)),
        ContentRangeCase(text: "bytes 0-0/1", expected: ContentRange(range: ByteRange(first: 0, last: 0), completeLength: 1)),
        ContentRangeCase(text: "bytes 42-1233/*", expected: ContentRange(range: ByteRange(first: 42, last: 1233), completeLength: nil)),
        ContentRangeCase(text: "bytes */1234", expected: ContentRange(range: nil, completeLength: 1234)),
        ContentRangeCase(text: "Bytes 1-2/3", expected: ContentRange(range: ByteRange(first: 1, last: 2), completeLength: 3)),
        ContentRangeCase(text: " bytes 1-2/3 ", expected: ContentRange(range: ByteRange(first: 1, last: 2), completeLength: 3)),
        ContentRangeCase(text: "bytes 0-9223372036854775806/9223372036854775807",
                         expected: ContentRange(range: ByteRange(first: 0, last: .max - 1), completeLength: .max)),
        ContentRangeCase(text: "bytes 5-3/10", expected: nil),                   // last < first
        ContentRangeCase(text: "bytes 0-10/10", expected: nil),                  // complete length not above last
        ContentRangeCase(text: "bytes */*", expected: nil),
        ContentRangeCase(text: "bytes 0-1", expected: nil),
        ContentRangeCase(text: "bytes 0-/10", expected: nil),
        ContentRangeCase(text: "bytes -1/10", expected: nil),
        ContentRangeCase(text: "bytes=0-1/10", expected: nil),
        ContentRangeCase(text: "items 0-1/10", expected: nil),
        ContentRangeCase(text: "bytes 0-1/99999999999999999999", expected: nil),  // beyond Int64: not clamped here
        ContentRangeCase(text: "bytes 0 -1/10", expected: nil),
        ContentRangeCase(text: "", expected: nil),
    ]

    @Test(arguments: contentRanges)
    func parsesContentRange(_ c: ContentRangeCase) {
        #expect(ContentRange(parsing: c.text) == c.expected)
    }

    @Test func formatsContentRangeForms() {
        #expect(ContentRange(range: ByteRange(first: 0, last: 499), completeLength: 1234).description == "bytes 0-499/1234")
        #expect(ContentRange(range: ByteRange(first: 7, last: 7), completeLength: nil).description == "bytes 7-7/*")
        #expect(ContentRange(range: nil, completeLength: 0).description == "bytes */0")
        // Round trip.
        let value = ContentRange(range: ByteRange(first: 10, last: 19), completeLength: 20)
        #expect(ContentRange(parsing: value.description) == value)
    }

    @Test func formatsRangeSpecs() {
        #expect(ByteRangeSpec.closed(first: 0, last: 9).description == "0-9")
        #expect(ByteRangeSpec.openEnded(first: 5).description == "5-")
        #expect(ByteRangeSpec.suffix(length: 3).description == "-3")
        #expect(ByteRange(first: 3, last: 5).count == 3)
    }
}
