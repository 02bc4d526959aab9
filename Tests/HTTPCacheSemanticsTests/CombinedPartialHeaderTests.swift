import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9111 §3.4 with §4.3.4: a stored partial completed by a 206 becomes a 200 whose header fields are the 206's
/// where it has them and the stored ones otherwise (`partial-use-headers`, `partial-use-stored-headers`).
@Suite struct CombinedPartialHeaderTests {
    static let stored = Fixture.stored(Fixture.headers([
        "ETag: \"v1\"", "Content-Length: 1000", "Content-Type: application/octet-stream",
        "Cache-Control: max-age=60", "X-Stored-Only: kept", "X-Both: old",
    ]))

    static func combined(_ lines: [String]) -> StoredResponse {
        RFC9111.combinedPartial(stored, with: CacheResponse(status: 206, headers: Fixture.headers(lines)),
                                completeLength: 1000, requestTime: Fixture.at(100), responseTime: Fixture.at(101))
    }

    @Test func theNew206sFieldsWinAndUnupdatedStoredFieldsAreKept() {
        let result = Self.combined(["ETag: \"v1\"", "Content-Range: bytes 400-999/1000", "Content-Length: 600",
                                    "Cache-Control: max-age=3600", "X-Both: new", "X-New: added", "Date: \(Fixture.date(100))"])
        let headers = result.response.headers
        #expect(result.response.status == 200)
        #expect(headers.values(for: "Cache-Control") == ["max-age=3600"])
        #expect(headers.values(for: "X-Both") == ["new"])
        #expect(headers.first("X-New") == "added")
        #expect(headers.first("X-Stored-Only") == "kept")
        #expect(headers.first("Content-Type") == "application/octet-stream")
        #expect(headers.first("Date") == Fixture.date(100))
    }

    @Test func theCombinedResponseDescribesTheWholeRepresentation() {
        let headers = Self.combined(["ETag: \"v1\"", "Content-Range: bytes 400-999/1000", "Content-Length: 600"]).response.headers
        #expect(headers.values(for: "Content-Length") == ["1000"])
        #expect(!headers.contains("Content-Range"))
    }

    @Test func theExchangeTimesAreThe206s() {
        let result = Self.combined(["ETag: \"v1\"", "Content-Range: bytes 400-999/1000"])
        #expect(result.requestTime == Fixture.at(100))
        #expect(result.responseTime == Fixture.at(101))
        // No Date on the 206: the time it was received stands in (RFC 9110 §6.6.1).
        #expect(result.response.headers.first("Date") == Fixture.date(101))
    }
}
