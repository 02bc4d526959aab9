import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9111 §4.2.4: a cache may serve a stale stored response when it is disconnected from the origin, unless a
/// directive forbids it; an HTTP error status is not a disconnection.
@Suite struct ServeStaleWhenDisconnectedTests {
    static func decision(_ cacheControl: String, mode: CacheMode = .private, status: Int? = nil,
                         request: CacheRequest = Fixture.request(), enabled: Bool = true) -> Kind {
        let stored = Fixture.stored([("Cache-Control", cacheControl)])
        let options = EvaluationOptions(mode: mode, servesStaleWhenDisconnected: enabled)
        return Kind(RFC9111.errorDecision(stored: stored, request: request, now: Fixture.at(100), options: options,
                                          status: status))
    }

    @Test(arguments: CacheMode.allCases)
    func staleIsServedWhenTheOriginIsUnreachable(mode: CacheMode) {
        #expect(Self.decision("max-age=2", mode: mode) == .useStored)
        #expect(Self.decision("max-age=2, proxy-revalidate", mode: .private) == .useStored)
    }

    @Test(arguments: [("max-age=2, must-revalidate", CacheMode.private), ("max-age=2, no-cache", .private),
                      ("max-age=2, must-revalidate", .shared), ("max-age=2, no-cache", .shared),
                      ("max-age=2, proxy-revalidate", .shared), ("max-age=2, s-maxage=2", .shared)])
    func aDirectiveForbidsIt(cacheControl: String, mode: CacheMode) {
        #expect(Self.decision(cacheControl, mode: mode) == .unsatisfiable)
    }

    @Test func anHTTPErrorStatusIsNotADisconnection() {
        #expect(Self.decision("max-age=2", status: 503) == .fetch)
        #expect(Self.decision("max-age=2, stale-if-error=600", status: 503) == .useStored)
    }

    @Test func theOptionTurnsItOff() {
        #expect(Self.decision("max-age=2", enabled: false) == .unsatisfiable)
    }

    @Test func aRequestNoCacheIsHonoured() {
        #expect(Self.decision("max-age=2", request: Fixture.request([("Cache-Control", "no-cache")])) == .unsatisfiable)
    }
}
