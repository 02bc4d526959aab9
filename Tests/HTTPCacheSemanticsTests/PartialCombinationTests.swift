import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9110 §14.4, §15.3.7 and RFC 9111 §3.4: when the origin's answer to `Range: bytes=<held>-` may be appended
/// to the bytes a cache holds, and when it must replace them or be thrown away.
@Suite struct PartialCombinationTests {
    static let storedHeaders = Fixture.headers(["ETag: \"v1\"", "Last-Modified: \(Fixture.date(-3600))",
                                                "Date: \(Fixture.date(0))", "Content-Length: 1000"])

    static func response(_ lines: [String], status: Int = 206) -> CacheResponse {
        CacheResponse(status: status, headers: Fixture.headers(lines))
    }

    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var held: Int64 = 400
        var stored: HTTPHeaders = PartialCombinationTests.storedHeaders
        var response: CacheResponse
        var expected: Expected
        var description: String { name }
    }

    enum Expected: Sendable, Equatable {
        case append(skip: Int64)
        case replace
        case reject
    }

    static let cases: [Case] = [
        Case(name: "exact continuation", response: response(["ETag: \"v1\"", "Content-Range: bytes 400-999/1000"]),
             expected: .append(skip: 0)),
        Case(name: "starts earlier: overlap skipped", response: response(["ETag: \"v1\"", "Content-Range: bytes 100-999/1000"]),
             expected: .append(skip: 300)),
        Case(name: "starts at zero", response: response(["ETag: \"v1\"", "Content-Range: bytes 0-999/1000"]),
             expected: .append(skip: 400)),
        Case(name: "starts later: a gap", response: response(["ETag: \"v1\"", "Content-Range: bytes 401-999/1000"]),
             expected: .reject),
        Case(name: "ends before held", response: response(["ETag: \"v1\"", "Content-Range: bytes 0-399/1000"]),
             expected: .reject),
        Case(name: "wrong total", response: response(["ETag: \"v1\"", "Content-Range: bytes 400-1999/2000"]),
             expected: .reject),
        Case(name: "unknown total", response: response(["ETag: \"v1\"", "Content-Range: bytes 400-999/*"]),
             expected: .reject),
        Case(name: "no Content-Range", response: response(["ETag: \"v1\""]), expected: .reject),
        Case(name: "invalid Content-Range", response: response(["ETag: \"v1\"", "Content-Range: bytes 400-1000/1000"]),
             expected: .reject),
        Case(name: "two Content-Range lines",
             response: response(["ETag: \"v1\"", "Content-Range: bytes 400-999/1000", "Content-Range: bytes 400-999/1000"]),
             expected: .reject),
        Case(name: "multipart", response: response(["ETag: \"v1\"", "Content-Type: multipart/byteranges; boundary=x"]),
             expected: .reject),
        Case(name: "Content-Length of the range",
             response: response(["ETag: \"v1\"", "Content-Range: bytes 400-999/1000", "Content-Length: 600"]),
             expected: .append(skip: 0)),
        Case(name: "Content-Length longer than the range",
             response: response(["ETag: \"v1\"", "Content-Range: bytes 400-999/1000", "Content-Length: 700"]),
             expected: .reject),
        Case(name: "Content-Length shorter than the range",
             response: response(["ETag: \"v1\"", "Content-Range: bytes 400-999/1000", "Content-Length: 0"]),
             expected: .reject),
        Case(name: "Content-Encoding the stored response lacks",
             response: response(["ETag: \"v1\"", "Content-Range: bytes 400-999/1000", "Content-Encoding: gzip"]),
             expected: .reject),
        Case(name: "Content-Encoding identity like the stored response",
             response: response(["ETag: \"v1\"", "Content-Range: bytes 400-999/1000", "Content-Encoding: identity"]),
             expected: .append(skip: 0)),
        Case(name: "the stored Content-Encoding in another case",
             stored: Fixture.headers(["ETag: \"v1\"", "Content-Encoding: gzip", "Content-Length: 1000"]),
             response: response(["ETag: \"v1\"", "Content-Range: bytes 400-999/1000", "Content-Encoding: GZIP"]),
             expected: .append(skip: 0)),
        Case(name: "changed ETag", response: response(["ETag: \"v2\"", "Content-Range: bytes 400-999/1000"]),
             expected: .reject),
        Case(name: "weak ETag on the 206", response: response(["ETag: W/\"v1\"", "Content-Range: bytes 400-999/1000"]),
             expected: .reject),
        Case(name: "weak stored ETag",
             stored: Fixture.headers(["ETag: W/\"v1\"", "Content-Length: 1000"]),
             response: response(["ETag: W/\"v1\"", "Content-Range: bytes 400-999/1000"]), expected: .reject),
        Case(name: "206 without ETag when stored has one", response: response(["Content-Range: bytes 400-999/1000"]),
             expected: .reject),
        Case(name: "strong Last-Modified only",
             stored: Fixture.headers(["Last-Modified: \(Fixture.date(-3600))", "Date: \(Fixture.date(0))", "Content-Length: 1000"]),
             response: response(["Last-Modified: \(Fixture.date(-3600))", "Content-Range: bytes 400-999/1000"]),
             expected: .append(skip: 0)),
        Case(name: "weak Last-Modified only",
             stored: Fixture.headers(["Last-Modified: \(Fixture.date(-10))", "Date: \(Fixture.date(0))", "Content-Length: 1000"]),
             response: response(["Last-Modified: \(Fixture.date(-10))", "Content-Range: bytes 400-999/1000"]),
             expected: .reject),
        Case(name: "changed Last-Modified",
             stored: Fixture.headers(["Last-Modified: \(Fixture.date(-3600))", "Date: \(Fixture.date(0))", "Content-Length: 1000"]),
             response: response(["Last-Modified: \(Fixture.date(-100))", "Content-Range: bytes 400-999/1000"]),
             expected: .reject),
        Case(name: "no validator at all", stored: Fixture.headers(["Content-Length: 1000"]),
             response: response(["Content-Range: bytes 400-999/1000"]), expected: .reject),
        Case(name: "stored total from its own Content-Range",
             stored: Fixture.headers(["ETag: \"v1\"", "Content-Range: bytes 0-399/1000", "Content-Length: 400"]),
             response: response(["ETag: \"v1\"", "Content-Range: bytes 400-999/1000"]), expected: .append(skip: 0)),
        Case(name: "stored total unknown", stored: Fixture.headers(["ETag: \"v1\""]),
             response: response(["ETag: \"v1\"", "Content-Range: bytes 400-999/1000"]), expected: .reject),
        Case(name: "200: the origin ignored Range or the representation changed", response: response(["ETag: \"v2\""], status: 200),
             expected: .replace),
        Case(name: "416", response: response(["Content-Range: bytes */1000"], status: 416), expected: .reject),
        Case(name: "304", response: response(["ETag: \"v1\""], status: 304), expected: .reject),
    ]

    @Test(arguments: cases)
    func combines(_ c: Case) {
        let result = RFC9110.partialCombination(held: c.held, stored: c.stored, response: c.response)
        switch (result, c.expected) {
        case (.append(_, let skip), .append(let expectedSkip)): #expect(skip == expectedSkip)
        case (.replace, .replace), (.reject, .reject): break
        default: Issue.record("\(c.name): got \(result), expected \(c.expected)")
        }
    }

    @Test func completeLengthComesFromContentRangeElseContentLength() {
        #expect(RFC9110.completeLength(Fixture.headers(["Content-Length: 1000"])) == 1000)
        #expect(RFC9110.completeLength(Fixture.headers(["Content-Range: bytes 0-9/50", "Content-Length: 10"])) == 50)
        #expect(RFC9110.completeLength(Fixture.headers(["Content-Length: 10", "Content-Length: 11"])) == nil)
        #expect(RFC9110.completeLength(Fixture.headers(["Content-Length: -1"])) == nil)
        #expect(RFC9110.completeLength([]) == nil)
    }
}
