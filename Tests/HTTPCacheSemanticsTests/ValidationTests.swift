import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9111 §4.3: conditional requests (§4.3.1), 5xx during validation (§4.3.3), freshening with 304 (§4.3.4,
/// §3.2) and with HEAD (§4.3.5); RFC 5861 §4 stale-if-error.
@Suite struct ValidationTests {
    @Test(arguments: [
        (["ETag: \"a\""], "\"a\"", nil),
        (["ETag: W/\"a\""], "W/\"a\"", nil),
        (["Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT"], nil, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (["ETag: \"a\"", "Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT"], "\"a\"", "Sun, 06 Nov 1994 08:49:37 GMT"),
        (["Last-Modified: yesterday"], nil, nil),
        (["ETag: unquoted"], "unquoted", nil),  // sent back verbatim
        ([], nil, nil),
    ] as [([String], String?, String?)])
    func conditionalHeaders(stored: [String], ifNoneMatch: String?, ifModifiedSince: String?) {
        let request = Fixture.request([("If-None-Match", "\"caller\""), ("Accept", "x")])
        let conditional = RFC9111.conditionalRequest(for: request, stored: Fixture.stored(Fixture.headers(stored)))
        if ifNoneMatch == nil && ifModifiedSince == nil {
            #expect(conditional == nil)
        } else {
            #expect(conditional?.headers["If-None-Match"] == ifNoneMatch)
            #expect(conditional?.headers["If-Modified-Since"] == ifModifiedSince)
            #expect(conditional?.headers["Accept"] == "x")
        }
    }

    @Test func conditionalForSeveralVariantsListsAllTags() {
        let a = Fixture.stored([("ETag", "\"a\""), ("Last-Modified", Fixture.date(-9))])
        let b = Fixture.stored([("ETag", "\"b\"")])
        let conditional = RFC9111.conditionalRequest(for: Fixture.request(), storedVariants: [a, b, a])
        #expect(conditional?.headers["If-None-Match"] == "\"a\", \"b\"")
        #expect(conditional?.headers["If-Modified-Since"] == nil)
    }

    /// §4.3.2: the caller's own If-None-Match / If-Modified-Since against the stored response.
    @Test(arguments: [
        ([String](), Bool?.none),
        (["If-None-Match: \"a\""], true), (["If-None-Match: W/\"a\""], true), (["If-None-Match: \"b\", \"a\""], true),
        (["If-None-Match: \"b\""], false), (["If-None-Match: *"], true),
        (["If-None-Match: \"b\"", "If-Modified-Since: \(Fixture.date(100))"], false),  // If-None-Match wins
        (["If-Modified-Since: \(Fixture.date(-10))"], true), (["If-Modified-Since: \(Fixture.date(-11))"], false),
        (["If-Modified-Since: not a date"], nil),
    ] as [([String], Bool?)])
    func callerPreconditions(request: [String], notModified: Bool?) {
        let stored = Fixture.stored([("ETag", "\"a\""), ("Last-Modified", Fixture.date(-10))])
        #expect(RFC9111.isNotModified(request: Fixture.request(Fixture.headers(request)), stored: stored) == notModified)
    }

    @Test func ifModifiedSinceFallsBackToDate() {
        let stored = Fixture.stored([("Cache-Control", "max-age=5")])
        #expect(RFC9111.isNotModified(request: Fixture.request([("If-Modified-Since", Fixture.date(0))]), stored: stored) == true)
        #expect(RFC9111.isNotModified(request: Fixture.request([("If-Modified-Since", Fixture.date(-1))]), stored: stored) == false)
        #expect(RFC9111.isNotModified(request: Fixture.request([("If-Modified-Since", Fixture.date(0))], method: "POST"), stored: stored) == nil)
    }

    static let lm = "Sun, 06 Nov 1994 08:49:37 GMT"
    static let lmDate = "Mon, 07 Nov 1994 08:49:37 GMT"

    /// (stored candidates' validator headers, 304 headers, selected indexes).
    @Test(arguments: [
        ([["ETag: \"a\""], ["ETag: \"b\""], ["ETag: \"a\""]], ["ETag: \"a\""], [0, 2]),
        ([["ETag: \"a\""], ["ETag: \"b\""]], ["ETag: \"c\""], []),
        ([["ETag: W/\"a\""]], ["ETag: \"a\""], []),  // strong 304 tag never matches a weak stored tag
        ([["ETag: W/\"a\""], ["ETag: W/\"a\""]], ["ETag: W/\"a\""], [1]),  // weak: most recent only (index 1 is newer)
        ([["Last-Modified: \(lm)"], ["Last-Modified: \(lm)"]], ["Last-Modified: \(lm)", "Date: \(lmDate)"], [0, 1]),  // strong LM
        ([["Last-Modified: \(lm)"], ["Last-Modified: \(lm)"]], ["Last-Modified: \(lm)", "Date: \(lm)"], [1]),  // weak LM
        ([[]], [], [0]),
        ([[], []], [], []),
        ([["ETag: \"a\""]], [], []),
        ([["ETag: abc"], ["ETag: abd"]], ["ETag: abc"], [0]),  // unquoted tags (60 of the real-world ones) still select
    ] as [([[String]], [String], [Int])])
    func selection(candidates: [[String]], notModified: [String], expected: [Int]) {
        let stored = candidates.enumerated().map { index, lines in
            var s = Fixture.stored(Fixture.headers(lines))
            s.responseTime = Fixture.at(Double(index))
            return s
        }
        #expect(RFC9111.selectForFreshening(stored, notModified: CacheResponse(status: 304, headers: Fixture.headers(notModified))) == expected)
    }

    @Test func freshenReplacesHeadersButKeepsBodyDescription() {
        let stored = Fixture.stored(Fixture.headers([
            "Content-Type: text/html", "Content-Length: 100", "Content-Encoding: gzip", "Cache-Control: max-age=10",
            "ETag: \"a\"", "Age: 50", "X-Old: 1", "Set-Cookie: a=1", "Set-Cookie: b=2",
        ]), overrideExpiry: Fixture.at(30))
        let notModified = CacheResponse(status: 304, headers: Fixture.headers([
            "Cache-Control: max-age=600", "Date: \(Fixture.date(100))", "ETag: \"a\"", "Content-Length: 0",
            "Content-Encoding: identity", "Connection: close, X-Hop", "X-Hop: 1", "Keep-Alive: timeout=5",
            "Set-Cookie: c=3", "X-New: 2",
        ]))
        let fresh = RFC9111.freshen(stored, with: notModified, requestTime: Fixture.at(99), responseTime: Fixture.at(100))
        let h = fresh.response.headers
        #expect(h["Cache-Control"] == "max-age=600" && h["Date"] == Fixture.date(100))
        #expect(h["Content-Length"] == "100" && h["Content-Encoding"] == "gzip" && h["Content-Type"] == "text/html")
        #expect(h.values(for: "Set-Cookie") == ["c=3"] && h["X-Old"] == "1" && h["X-New"] == "2")
        #expect(!h.contains("Age") && !h.contains("Connection") && !h.contains("X-Hop") && !h.contains("Keep-Alive"))
        #expect(fresh.requestTime == Fixture.at(99) && fresh.responseTime == Fixture.at(100))
        #expect(fresh.overrideExpiry == Fixture.at(130))  // caller lifetime of 30 s restarts from receipt
        #expect(fresh.response.status == 200)
        #expect(RFC9111.isFresh(fresh, now: Fixture.at(120), options: EvaluationOptions()))
        #expect(RFC9111.currentAge(fresh, now: Fixture.at(100)) == 1)  // response delay 1 s
    }

    @Test func freshenWithout304DateStampsReceipt() {
        let stored = Fixture.stored([("Cache-Control", "max-age=10"), ("ETag", "\"a\"")])
        let fresh = RFC9111.freshen(stored, with: CacheResponse(status: 304, headers: [("ETag", "\"a\"")]),
                                    requestTime: Fixture.at(500), responseTime: Fixture.at(500))
        #expect(fresh.response.headers["Date"] == Fixture.date(500))
        #expect(RFC9111.isFresh(fresh, now: Fixture.at(505), options: EvaluationOptions()))
    }

    @Test(arguments: [
        (["ETag: \"a\"", "Content-Length: 100"], true),
        (["ETag: \"b\"", "Content-Length: 100"], false),
        (["ETag: \"a\"", "Content-Length: 99"], false),
        (["Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT"], false),
        (["Cache-Control: max-age=60"], true),
    ])
    func headFreshening(head: [String], updates: Bool) {
        let stored = Fixture.stored([("ETag", "\"a\""), ("Content-Length", "100"), ("Cache-Control", "max-age=1")])
        let result = RFC9111.freshenWithHEAD(stored, head: CacheResponse(status: 200, headers: Fixture.headers(head)),
                                             requestTime: Fixture.at(10), responseTime: Fixture.at(10))
        #expect((result != nil) == updates)
        if let result { #expect(result.responseTime == Fixture.at(10) && result.response.headers["Content-Length"] == "100") }
    }

    struct ErrorCase: Sendable, CustomStringConvertible {
        var response: [String]
        var request: [String] = []
        var now: Double
        var status: Int?
        var options = EvaluationOptions()
        var expected: Kind
        var description: String { "\(response) req=\(request) now=+\(now) status=\(String(describing: status)) → \(expected)" }
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase(response: ["Cache-Control: max-age=100"], now: 150, status: 503, expected: .fetch),
        ErrorCase(response: ["Cache-Control: max-age=100"], now: 150, status: nil,
                  options: EvaluationOptions(servesStaleWhenDisconnected: false), expected: .unsatisfiable),
        ErrorCase(response: ["Cache-Control: max-age=100"], now: 150, status: nil, expected: .useStored),  // disconnected
        ErrorCase(response: ["Cache-Control: max-age=100"], now: 50, status: nil, expected: .useStored),  // still fresh
        ErrorCase(response: ["Cache-Control: max-age=100"], now: 150, status: 404, expected: .fetch),  // not an error to hide
        ErrorCase(response: ["Cache-Control: max-age=100, stale-if-error=60"], now: 150, status: 500, expected: .useStored),
        ErrorCase(response: ["Cache-Control: max-age=100, stale-if-error=60"], now: 150, status: nil, expected: .useStored),
        ErrorCase(response: ["Cache-Control: max-age=100, stale-if-error=60"], now: 170, status: 502, expected: .fetch),
        ErrorCase(response: ["Cache-Control: max-age=100"], request: ["Cache-Control: stale-if-error=100"], now: 150, status: 504, expected: .useStored),
        ErrorCase(response: ["Cache-Control: max-age=100, stale-if-error=60, must-revalidate"], now: 150, status: 500, expected: .fetch),
        ErrorCase(response: ["Cache-Control: max-age=100, must-revalidate"], now: 150, status: nil,
                  options: EvaluationOptions(fallbackToCacheIfLoadFails: true), expected: .unsatisfiable),
        ErrorCase(response: ["Cache-Control: max-age=100"], now: 9999, status: nil,
                  options: EvaluationOptions(fallbackToCacheIfLoadFails: true), expected: .useStored),
        ErrorCase(response: ["Cache-Control: max-age=100"], now: 9999, status: 500,
                  options: EvaluationOptions(fallbackToCacheIfLoadFails: true), expected: .useStored),
        ErrorCase(response: ["Cache-Control: no-cache"], now: 1, status: nil,
                  options: EvaluationOptions(fallbackToCacheIfLoadFails: true), expected: .unsatisfiable),
        ErrorCase(response: ["Cache-Control: no-cache"], now: 1, status: nil,
                  options: EvaluationOptions(ignoreServerCacheControl: true, fallbackToCacheIfLoadFails: true), expected: .useStored),
        ErrorCase(response: ["Cache-Control: max-age=100, proxy-revalidate"], now: 150, status: nil,
                  options: EvaluationOptions(mode: .shared, fallbackToCacheIfLoadFails: true), expected: .unsatisfiable),
        ErrorCase(response: ["Cache-Control: max-age=100"], request: ["Cache-Control: max-stale=60"], now: 150, status: nil, expected: .useStored),
        ErrorCase(response: ["Cache-Control: max-age=100"], request: ["Cache-Control: no-cache"], now: 50, status: nil, expected: .unsatisfiable),
    ]

    @Test(arguments: errorCases)
    func errorDuringRevalidation(c: ErrorCase) {
        let decision = RFC9111.errorDecision(stored: Fixture.stored(Fixture.headers(c.response)),
                                             request: Fixture.request(Fixture.headers(c.request)),
                                             now: Fixture.at(c.now), options: c.options, status: c.status)
        #expect(Kind(decision) == c.expected, "\(decision.reason)")
        #expect(!decision.reason.isEmpty)
    }
}
