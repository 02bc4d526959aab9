import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9111 §4.2.1: differing repeated max-age / s-maxage values make the response stale (the RFC's second
/// option; the same rule as for differing Expires lines); a repeated identical value is just that value.
@Suite struct DuplicateMaxAgeTests {
    @Test(arguments: [["Cache-Control: max-age=600, max-age=5"], ["Cache-Control: max-age=5, max-age=600"],
                      ["Cache-Control: max-age=600", "Cache-Control: max-age=5"]])
    func differingMaxAgeIsStale(lines: [String]) {
        let stored = Fixture.stored(Fixture.headers(lines))
        #expect(RFC9111.freshnessLifetime(stored, options: EvaluationOptions()) == 0)
        #expect(Kind(RFC9111.evaluate(request: Fixture.request(), stored: stored, now: Fixture.at(1),
                                      options: EvaluationOptions())) == .fetch)
        #expect(CacheControl(headers: Fixture.headers(lines)).problems.contains { $0.contains("RFC 9111 §4.2.1") })
    }

    @Test func differingSMaxAgeIsStaleInASharedCache() {
        let stored = Fixture.stored(Fixture.headers(["Cache-Control: s-maxage=600, s-maxage=5, max-age=600"]))
        #expect(RFC9111.freshnessLifetime(stored, options: EvaluationOptions(mode: .shared)) == 0)
        #expect(RFC9111.freshnessLifetime(stored, options: EvaluationOptions(mode: .private)) == 600)
    }

    @Test func aRepeatedEqualValueIsKept() {
        let stored = Fixture.stored(Fixture.headers(["Cache-Control: max-age=600, max-age=600"]))
        #expect(RFC9111.freshnessLifetime(stored, options: EvaluationOptions()) == 600)
    }
}
