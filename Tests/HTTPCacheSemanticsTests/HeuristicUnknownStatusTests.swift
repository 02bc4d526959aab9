import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9111 §3 / §4.2.2: a status this cache does not understand (599) is stored and heuristically fresh when the
/// response is marked `public` and has Last-Modified; without `public` it is not stored.
@Suite struct HeuristicUnknownStatusTests {
    static let lastModified = ("Last-Modified", Fixture.date(-86_400))

    @Test(arguments: CacheMode.allCases)
    func publicUnknownStatusIsCachedHeuristically(mode: CacheMode) {
        let headers = HTTPHeaders([Self.lastModified, ("Cache-Control", "public")])
        let response = CacheResponse(status: 599, headers: headers)
        #expect(RFC9111.storability(request: Fixture.request(), response: response, mode: mode).isStorable)
        let stored = Fixture.stored(headers, status: 599)
        #expect(RFC9111.freshnessLifetime(stored, options: EvaluationOptions(mode: mode)) == 8_640)
        #expect(Kind(RFC9111.evaluate(request: Fixture.request(), stored: stored, now: Fixture.at(60),
                                      options: EvaluationOptions(mode: mode))) == .useStored)
    }

    @Test func withoutPublicItIsNotStored() {
        let response = CacheResponse(status: 599, headers: HTTPHeaders([Self.lastModified]))
        #expect(!RFC9111.storability(request: Fixture.request(), response: response, mode: .private).isStorable)
    }
}
