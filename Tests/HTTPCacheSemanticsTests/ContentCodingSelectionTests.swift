import Foundation
import Testing
@testable import HTTPCacheSemantics

/// A stored response with a non-identity Content-Encoding is selected only for a request whose Accept-Encoding
/// accepts that coding, with or without `Vary: Accept-Encoding`, when it was stored for a request that carried
/// Accept-Encoding (RFC 9111 §4.1, RFC 9110 §12.5.3).
@Suite struct ContentCodingSelectionTests {
    /// The stored request's Accept-Encoding is kept for a coded response without Vary; a coded response an
    /// origin sent to a request without Accept-Encoding is selected for such a request.
    @Test func acceptEncodingIsKeptForACodedResponseOnly() {
        let coded = CacheResponse(status: 200, headers: [("Content-Encoding", "gzip")])
        let plain = CacheResponse(status: 200, headers: [])
        let asked: HTTPHeaders = [("Accept-Encoding", "gzip"), ("Accept", "x")]
        #expect(RFC9111.varyingRequestHeaders(response: coded, request: asked) == [("Accept-Encoding", "gzip")])
        #expect(RFC9111.varyingRequestHeaders(response: plain, request: asked) == [])
        let unasked = Fixture.stored([("Content-Encoding", "gzip")],
                                     varying: RFC9111.varyingRequestHeaders(response: coded, request: []))
        #expect(RFC9111.matches(stored: unasked, request: Fixture.request()))
    }

    @Test(arguments: [
        // (stored Content-Encoding, presented Accept-Encoding or nil, selected)
        ("gzip", nil, false),
        ("gzip", "gzip, deflate", true),
        ("gzip", "deflate", false),
        ("gzip", "identity", false),
        ("gzip", "*", true),
        ("gzip", "GZIP;q=0.5", true),
        ("gzip", "gzip;q=0", false),
        ("gzip", "*, gzip;q=0", false),
        ("x-gzip", "gzip", true),
        ("gzip, br", "gzip", false),
        ("gzip, br", "gzip, br", true),
        ("identity", nil, true),
        ("", nil, true),
        ("", "gzip", true),
    ] as [(String, String?, Bool)])
    func codedResponseIsSelectedOnlyWhenAccepted(coding: String, acceptEncoding: String?, selected: Bool) {
        var response: HTTPHeaders = [("Date", Fixture.date(0)), ("Cache-Control", "max-age=600")]
        if !coding.isEmpty { response.add("Content-Encoding", coding) }
        let stored = Fixture.stored(response, varying: [("Accept-Encoding", "gzip, deflate")])
        var request = HTTPHeaders()
        if let acceptEncoding { request.add("Accept-Encoding", acceptEncoding) }
        #expect(RFC9111.matches(stored: stored, request: Fixture.request(request)) == selected)
    }

    /// A fresh gzip response stored without Vary is a hit for a request that accepts gzip and a miss (not a
    /// fresh hit) for a plain request, at the same fixed time.
    @Test func plainRequestMissesAFreshGzipResponseStoredWithoutVary() {
        let stored = Fixture.stored([("Date", Fixture.date(0)), ("Cache-Control", "max-age=600"),
                                     ("Content-Encoding", "gzip")], varying: [("Accept-Encoding", "gzip")])
        let compressed = RFC9111.evaluate(request: Fixture.request([("Accept-Encoding", "gzip, deflate")]), stored: stored,
                                          now: Fixture.at(10), options: EvaluationOptions())
        let plain = RFC9111.evaluate(request: Fixture.request(), stored: stored, now: Fixture.at(10), options: EvaluationOptions())
        #expect(compressed == .useStored(reason: compressed.reason))
        #expect(plain == .fetch(reason: plain.reason))
        #expect(plain.reason.contains("Content-Encoding gzip"))
    }
}
