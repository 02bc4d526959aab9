import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9110 §14.1.2–14.2, §13.1.5, §15.3.7, §15.5.17: answering a Range request from a complete stored body.
@Suite struct RangeAnswerTests {
    /// Stored headers with a strong ETag and a Last-Modified an hour before Date (strong, §8.8.2.2).
    static let stored = Fixture.headers(["ETag: \"v1\"", "Last-Modified: \(Fixture.date(-3600))", "Date: \(Fixture.date(0))",
                                         "Content-Length: 1000", "Content-Type: text/plain"])

    struct ResolveCase: Sendable, CustomStringConvertible {
        var spec: ByteRangeSpec
        var length: Int64
        var expected: ByteRange?
        var description: String { "\(spec) of \(length) → \(String(describing: expected))" }
    }

    static let resolutions: [ResolveCase] = [
        ResolveCase(spec: .closed(first: 0, last: 0), length: 1000, expected: ByteRange(first: 0, last: 0)),
        ResolveCase(spec: .closed(first: 0, last: 499), length: 1000, expected: ByteRange(first: 0, last: 499)),
        ResolveCase(spec: .closed(first: 500, last: 5000), length: 1000, expected: ByteRange(first: 500, last: 999)),  // cut at the end
        ResolveCase(spec: .closed(first: 999, last: 999), length: 1000, expected: ByteRange(first: 999, last: 999)),
        ResolveCase(spec: .closed(first: 1000, last: 1000), length: 1000, expected: nil),
        ResolveCase(spec: .closed(first: 0, last: .max), length: 1000, expected: ByteRange(first: 0, last: 999)),
        ResolveCase(spec: .openEnded(first: 0), length: 1000, expected: ByteRange(first: 0, last: 999)),
        ResolveCase(spec: .openEnded(first: 999), length: 1000, expected: ByteRange(first: 999, last: 999)),
        ResolveCase(spec: .openEnded(first: 1000), length: 1000, expected: nil),
        ResolveCase(spec: .openEnded(first: .max), length: 1000, expected: nil),
        ResolveCase(spec: .suffix(length: 1), length: 1000, expected: ByteRange(first: 999, last: 999)),
        ResolveCase(spec: .suffix(length: 500), length: 1000, expected: ByteRange(first: 500, last: 999)),
        ResolveCase(spec: .suffix(length: 5000), length: 1000, expected: ByteRange(first: 0, last: 999)),  // shorter: whole
        ResolveCase(spec: .suffix(length: .max), length: 1000, expected: ByteRange(first: 0, last: 999)),
        ResolveCase(spec: .suffix(length: 0), length: 1000, expected: nil),                              // bytes=-0
        ResolveCase(spec: .closed(first: 0, last: 0), length: 0, expected: nil),
        ResolveCase(spec: .suffix(length: 1), length: 0, expected: nil),
        ResolveCase(spec: .closed(first: 0, last: .max), length: .max, expected: ByteRange(first: 0, last: .max - 1)),
    ]

    @Test(arguments: resolutions)
    func resolvesAgainstLength(_ c: ResolveCase) {
        #expect(c.spec.resolved(length: c.length) == c.expected)
    }

    @Test func singleRangeGivesPartialWithContentRange() {
        let answer = RFC9110.rangeAnswer(request: Fixture.request([("Range", "bytes=100-199")]), status: 200,
                                         headers: Self.stored, length: 1000)
        let range = ByteRange(first: 100, last: 199)
        #expect(answer == .partial(range: range, contentRange: ContentRange(range: range, completeLength: 1000)))
    }

    @Test func unsatisfiableGivesStarContentRange() {
        for value in ["bytes=1000-", "bytes=-0", "bytes=5000-6000"] {
            let answer = RFC9110.rangeAnswer(request: Fixture.request([("Range", value)]), status: 200,
                                             headers: Self.stored, length: 1000)
            #expect(answer == .unsatisfiable(contentRange: ContentRange(range: nil, completeLength: 1000)), "\(value)")
            if case .unsatisfiable(let contentRange) = answer { #expect(contentRange.description == "bytes */1000") }
        }
    }

    @Test func multipleRangesGoToTheOrigin() {
        let answer = RFC9110.rangeAnswer(request: Fixture.request([("Range", "bytes=0-1,5-6")]), status: 200,
                                         headers: Self.stored, length: 1000)
        guard case .forwardToOrigin = answer else {
            Issue.record("expected forwardToOrigin, got \(answer)")
            return
        }
    }

    struct WholeCase: Sendable, CustomStringConvertible {
        var request: [String]
        var method = "GET"
        var status = 200
        var length: Int64 = 1000
        var description: String { "\(method) \(request) on \(status) of \(length)" }
    }

    static let wholes: [WholeCase] = [
        WholeCase(request: []),
        WholeCase(request: ["Range: bytes=5-3"]),                     // invalid: ignored
        WholeCase(request: ["Range: items=0-1"]),
        WholeCase(request: ["Range: bytes=0-1"], method: "HEAD"),     // defined for GET only
        WholeCase(request: ["Range: bytes=0-1"], status: 404),
        WholeCase(request: ["Range: bytes=0-1"], status: 203),
        WholeCase(request: ["Range: bytes=-5"], length: 0),           // nothing a 206 can carry
        WholeCase(request: ["Range: bytes=0-1", "If-Range: \"v2\""]),
        WholeCase(request: ["Range: bytes=0-1", "If-Range: W/\"v1\""]),                  // weak never matches
        WholeCase(request: ["Range: bytes=0-1", "If-Range: \(Fixture.date(-3599))"]),   // not the Last-Modified
        WholeCase(request: ["Range: bytes=0-1", "If-Range: garbage"]),
    ]

    @Test(arguments: wholes)
    func answersWhole(_ c: WholeCase) {
        let answer = RFC9110.rangeAnswer(request: Fixture.request(Fixture.headers(c.request), method: c.method),
                                         status: c.status, headers: Self.stored, length: c.length)
        guard case .whole = answer else {
            Issue.record("expected whole, got \(answer)")
            return
        }
    }

    @Test func unsatisfiableOnEmptyRepresentationForIntRange() {
        let answer = RFC9110.rangeAnswer(request: Fixture.request([("Range", "bytes=0-0")]), status: 200,
                                         headers: Self.stored, length: 0)
        #expect(answer == .unsatisfiable(contentRange: ContentRange(range: nil, completeLength: 0)))
    }

    @Test func matchingIfRangeKeepsThePartialAnswer() {
        for ifRange in ["\"v1\"", Fixture.date(-3600), " \"v1\" "] {
            let request = Fixture.request([("Range", "bytes=0-9"), ("If-Range", ifRange)])
            let answer = RFC9110.rangeAnswer(request: request, status: 200, headers: Self.stored, length: 1000)
            guard case .partial = answer else {
                Issue.record("If-Range \(ifRange): expected partial, got \(answer)")
                continue
            }
        }
    }

    @Test func ifRangeDateNeedsAStrongLastModified() {
        // Last-Modified 30 s before Date: weak for a cache (RFC 9110 §8.8.2.2 asks for 60 s).
        let weak = Fixture.headers(["Last-Modified: \(Fixture.date(-30))", "Date: \(Fixture.date(0))"])
        #expect(!RFC9110.ifRangeMatches(Fixture.date(-30), stored: weak))
        #expect(!RFC9110.isStrongLastModified(weak))
        let strong = Fixture.headers(["Last-Modified: \(Fixture.date(-60))", "Date: \(Fixture.date(0))"])
        #expect(RFC9110.ifRangeMatches(Fixture.date(-60), stored: strong))
        #expect(!RFC9110.isStrongLastModified(Fixture.headers(["Last-Modified: \(Fixture.date(-600))"])))  // no Date
        // A weak stored ETag never matches, even the same opaque tag.
        #expect(!RFC9110.ifRangeMatches("\"v1\"", stored: Fixture.headers(["ETag: W/\"v1\""])))
    }

    @Test func ifRangeValidatorPrefersAStrongETag() {
        #expect(RFC9110.ifRangeValidator(Self.stored) == "\"v1\"")
        #expect(RFC9110.ifRangeValidator(Fixture.headers(["ETag: W/\"v1\"", "Last-Modified: \(Fixture.date(-3600))",
                                                          "Date: \(Fixture.date(0))"])) == nil)
        #expect(RFC9110.ifRangeValidator(Fixture.headers(["Last-Modified: \(Fixture.date(-3600))", "Date: \(Fixture.date(0))"]))
                == Fixture.date(-3600))
        #expect(RFC9110.ifRangeValidator(Fixture.headers(["Last-Modified: \(Fixture.date(-5))", "Date: \(Fixture.date(0))"])) == nil)
        #expect(RFC9110.ifRangeValidator([]) == nil)
    }

    @Test func partialHeadersCarryLengthAndContentRange() {
        let contentRange = ContentRange(range: ByteRange(first: 10, last: 19), completeLength: 1000)
        let headers = RFC9110.partialContentHeaders(Self.stored, contentRange: contentRange)
        #expect(headers.values(for: "Content-Length") == ["10"])
        #expect(headers.values(for: "Content-Range") == ["bytes 10-19/1000"])
        #expect(headers.first("ETag") == "\"v1\"")
        #expect(headers.first("Content-Type") == "text/plain")
    }

    @Test func rangeNotSatisfiableHeadersDropRepresentationFields() {
        let headers = RFC9110.rangeNotSatisfiableHeaders(Self.stored, contentRange: ContentRange(range: nil, completeLength: 1000))
        #expect(headers.first("Content-Range") == "bytes */1000")
        #expect(headers.first("Content-Length") == "0")
        #expect(headers.first("Content-Type") == nil)
        #expect(headers.first("ETag") == "\"v1\"")
    }
}
