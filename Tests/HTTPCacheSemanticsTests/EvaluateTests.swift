import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9111 §4 (constructing responses from caches), §4.2.4 (serving stale), §5.2.1 (request directives),
/// §5.2.2 response directives, RFC 5861 stale-while-revalidate, RFC 8246 immutable, and the caller's policies.
@Suite struct EvaluateTests {
    struct Case: Sendable, CustomStringConvertible {
        var response: [String]
        var request: [String] = []
        var now: Double
        var options = EvaluationOptions()
        var expected: Kind
        var reasonContains = ""
        var description: String { "\(response) req=\(request) now=+\(now) \(options.mode) \(options.policy) → \(expected)" }
    }

    static let etag = "ETag: \"v1\""
    static let shared = EvaluationOptions(mode: .shared)

    static let cases: [Case] = [
        // Fresh / stale basics (§4.2).
        Case(response: ["Cache-Control: max-age=100"], now: 50, expected: .useStored, reasonContains: "fresh"),
        Case(response: ["Cache-Control: max-age=100", etag], now: 100, expected: .revalidate, reasonContains: "stale by 0 s"),
        Case(response: ["Cache-Control: max-age=100"], now: 150, expected: .fetch, reasonContains: "no validator"),
        Case(response: ["Cache-Control: max-age=100", "Last-Modified: \(Fixture.date(-10))"], now: 150, expected: .revalidate),
        Case(response: ["Expires: 0", etag], now: 0, expected: .revalidate, reasonContains: "invalid Expires"),
        // Response no-cache (§5.2.2.4), also via Pragma without Cache-Control.
        Case(response: ["Cache-Control: no-cache, max-age=100", etag], now: 1, expected: .revalidate, reasonContains: "no-cache"),
        Case(response: ["Pragma: no-cache", "Expires: \(Fixture.date(100))", etag], now: 1, expected: .revalidate),
        Case(response: ["Cache-Control: no-cache=\"Set-Cookie\", max-age=100", etag], now: 1, expected: .useStored),
        // Request directives (§5.2.1).
        Case(response: ["Cache-Control: max-age=100", etag], request: ["Cache-Control: no-cache"], now: 1, expected: .revalidate, reasonContains: "request no-cache"),
        Case(response: ["Cache-Control: max-age=100", etag], request: ["Pragma: no-cache"], now: 1, expected: .revalidate),
        Case(response: ["Cache-Control: max-age=100", etag], request: ["Cache-Control: max-age=10"], now: 20, expected: .revalidate, reasonContains: "max-age=10"),
        Case(response: ["Cache-Control: max-age=100", etag], request: ["Cache-Control: max-age=30"], now: 20, expected: .useStored),
        Case(response: ["Cache-Control: max-age=100", etag], request: ["Cache-Control: min-fresh=50"], now: 60, expected: .revalidate, reasonContains: "min-fresh"),
        Case(response: ["Cache-Control: max-age=100", etag], request: ["Cache-Control: min-fresh=50"], now: 40, expected: .useStored),
        Case(response: ["Cache-Control: max-age=100", etag], request: ["Cache-Control: max-stale=60"], now: 150, expected: .useStored, reasonContains: "max-stale"),
        Case(response: ["Cache-Control: max-age=100", etag], request: ["Cache-Control: max-stale=60"], now: 170, expected: .revalidate),
        Case(response: ["Cache-Control: max-age=100", etag], request: ["Cache-Control: max-stale"], now: 100_000, expected: .useStored),
        Case(response: ["Cache-Control: max-age=100", etag], request: ["Cache-Control: max-stale, max-age=120"], now: 150, expected: .revalidate),
        Case(response: ["Cache-Control: max-age=100", etag], request: ["Cache-Control: only-if-cached"], now: 50, expected: .useStored),
        Case(response: ["Cache-Control: max-age=100", etag], request: ["Cache-Control: only-if-cached"], now: 150, expected: .unsatisfiable, reasonContains: "only-if-cached"),
        Case(response: ["Cache-Control: max-age=100", etag], request: ["Cache-Control: only-if-cached, no-cache"], now: 1, expected: .unsatisfiable),
        Case(response: ["Cache-Control: max-age=100", etag], request: ["Cache-Control: only-if-cached, max-stale"], now: 500, expected: .useStored),
        // must-revalidate / proxy-revalidate / s-maxage forbid stale (§4.2.4).
        Case(response: ["Cache-Control: max-age=100, must-revalidate", etag], request: ["Cache-Control: max-stale"], now: 150, expected: .revalidate, reasonContains: "must-revalidate"),
        Case(response: ["Cache-Control: max-age=100, proxy-revalidate", etag], request: ["Cache-Control: max-stale"], now: 150, expected: .useStored),
        Case(response: ["Cache-Control: max-age=100, proxy-revalidate", etag], request: ["Cache-Control: max-stale"], now: 150, options: shared, expected: .revalidate, reasonContains: "proxy-revalidate"),
        Case(response: ["Cache-Control: s-maxage=100", etag], request: ["Cache-Control: max-stale"], now: 150, options: shared, expected: .revalidate, reasonContains: "s-maxage"),
        Case(response: ["Cache-Control: max-age=10, s-maxage=100", etag], now: 50, options: shared, expected: .useStored),
        Case(response: ["Cache-Control: max-age=10, s-maxage=100", etag], now: 50, expected: .revalidate),
        // stale-while-revalidate (RFC 5861 §3).
        Case(response: ["Cache-Control: max-age=100, stale-while-revalidate=60", etag], now: 130, expected: .useStoredAndRevalidate, reasonContains: "stale-while-revalidate"),
        Case(response: ["Cache-Control: max-age=100, stale-while-revalidate=60"], now: 130, expected: .useStoredAndRevalidate),
        Case(response: ["Cache-Control: max-age=100, stale-while-revalidate=60", etag], now: 161, expected: .revalidate),
        Case(response: ["Cache-Control: max-age=100, stale-while-revalidate=60, must-revalidate", etag], now: 130, expected: .revalidate),
        Case(response: ["Cache-Control: max-age=100, stale-while-revalidate=60", etag], request: ["Cache-Control: only-if-cached"], now: 130, expected: .useStored, reasonContains: "no background"),
        Case(response: ["Cache-Control: max-age=100, stale-while-revalidate=60", etag], request: ["Cache-Control: min-fresh=1"], now: 130, expected: .revalidate),
        // immutable (RFC 8246): a reload's max-age=0 does not revalidate while fresh; no-cache still does.
        Case(response: ["Cache-Control: max-age=100, immutable", etag], request: ["Cache-Control: max-age=0"], now: 5, expected: .useStored),
        Case(response: ["Cache-Control: max-age=100, immutable", etag], request: ["Cache-Control: no-cache"], now: 5, expected: .revalidate),
        Case(response: ["Cache-Control: max-age=100, immutable", etag], now: 101, expected: .revalidate),
        // Age header counts (stale on arrival).
        Case(response: ["Cache-Control: max-age=300", "Age: 997", etag], now: 0, expected: .revalidate),
        // Heuristic freshness.
        Case(response: ["Last-Modified: \(Fixture.date(-10_000))"], now: 999, expected: .useStored, reasonContains: "heuristic"),
        Case(response: ["Last-Modified: \(Fixture.date(-10_000))"], now: 1000, expected: .revalidate),
        // Policies.
        Case(response: ["Cache-Control: max-age=100"], now: 1, options: EvaluationOptions(policy: .reloadIgnoringLocalCacheData), expected: .fetch, reasonContains: "policy reload:"),
        Case(response: ["Cache-Control: max-age=100", "Age: 99999"], now: 1, options: EvaluationOptions(policy: .returnCacheDataElseLoad), expected: .useStored, reasonContains: "stale"),
        Case(response: ["Cache-Control: no-cache"], now: 1, options: EvaluationOptions(policy: .onlyLoadIfNotCached), expected: .useStored),
        Case(response: ["Cache-Control: max-age=1, must-revalidate"], now: 99, options: EvaluationOptions(policy: .returnCacheDataDontLoad), expected: .useStored),
        Case(response: ["Cache-Control: max-age=1"], now: 99, options: EvaluationOptions(policy: .dontLoad), expected: .useStored),
        Case(response: ["Cache-Control: max-age=100", etag], now: 1, options: EvaluationOptions(policy: .reloadRevalidatingCacheData), expected: .revalidate, reasonContains: "policy reload-revalidating"),
        Case(response: ["Cache-Control: max-age=100"], now: 1, options: EvaluationOptions(policy: .reloadRevalidatingCacheData), expected: .fetch),
        // Overrides: caller lifetime replaces the server's; ignoreServerCacheControl drops no-cache and max-age.
        Case(response: ["Cache-Control: max-age=0", etag], now: 50, options: EvaluationOptions(lifetimeOverride: 60), expected: .useStored, reasonContains: "caller's lifetime"),
        Case(response: ["Cache-Control: max-age=0", etag], now: 61, options: EvaluationOptions(lifetimeOverride: 60), expected: .revalidate),
        Case(response: ["Cache-Control: no-cache", "Last-Modified: \(Fixture.date(-10_000))"], now: 10, options: EvaluationOptions(ignoreServerCacheControl: true), expected: .useStored),
        Case(response: ["Cache-Control: max-age=100000", etag], now: 10, options: EvaluationOptions(ignoreServerCacheControl: true), expected: .revalidate),
        Case(response: ["Cache-Control: no-cache", etag], now: 10, options: EvaluationOptions(ignoreServerCacheControl: true, lifetimeOverride: 60), expected: .useStored),
    ]

    @Test(arguments: cases)
    func decision(c: Case) {
        let stored = Fixture.stored(Fixture.headers(c.response))
        let decision = RFC9111.evaluate(request: Fixture.request(Fixture.headers(c.request)), stored: stored,
                                        now: Fixture.at(c.now), options: c.options)
        #expect(Kind(decision) == c.expected, "\(decision.reason)")
        #expect(!decision.reason.isEmpty)
        #expect(c.reasonContains.isEmpty || decision.reason.contains(c.reasonContains), "\(decision.reason)")
    }

    @Test(arguments: [
        (CachePolicy.useProtocolCachePolicy, [String](), Kind.fetch),
        (.returnCacheDataElseLoad, [], .fetch), (.onlyLoadIfNotCached, [], .fetch), (.reloadRevalidatingCacheData, [], .fetch),
        (.returnCacheDataDontLoad, [], .unsatisfiable), (.dontLoad, [], .unsatisfiable),
        (.useProtocolCachePolicy, ["Cache-Control: only-if-cached"], .unsatisfiable),
        (.reloadIgnoringLocalCacheData, ["Cache-Control: only-if-cached"], .fetch),
    ] as [(CachePolicy, [String], Kind)])
    func nothingStored(policy: CachePolicy, request: [String], expected: Kind) {
        let decision = RFC9111.evaluate(request: Fixture.request(Fixture.headers(request)), stored: nil, now: Fixture.t0,
                                        options: EvaluationOptions(policy: policy))
        #expect(Kind(decision) == expected, "\(decision.reason)")
        #expect(decision.reason.contains("no stored response") || policy == .reloadIgnoringLocalCacheData)
    }

    @Test func varyMismatchIsAMiss() {
        let stored = Fixture.stored([("Cache-Control", "max-age=100"), ("Vary", "Accept-Language")], varying: [("Accept-Language", "en")])
        let hit = RFC9111.evaluate(request: Fixture.request([("Accept-Language", "en")]), stored: stored, now: Fixture.t0, options: EvaluationOptions())
        let miss = RFC9111.evaluate(request: Fixture.request([("Accept-Language", "de")]), stored: stored, now: Fixture.t0, options: EvaluationOptions())
        #expect(Kind(hit) == .useStored)
        #expect(Kind(miss) == .fetch && miss.reason.contains("Vary"))
        let dontLoad = RFC9111.evaluate(request: Fixture.request([("Accept-Language", "de")]), stored: stored, now: Fixture.t0,
                                        options: EvaluationOptions(policy: .dontLoad))
        #expect(Kind(dontLoad) == .unsatisfiable)
    }

    @Test func unsafeMethodsAreNotServed() {
        let stored = Fixture.stored([("Cache-Control", "max-age=100")])
        let post = RFC9111.evaluate(request: Fixture.request(method: "POST"), stored: stored, now: Fixture.t0, options: EvaluationOptions())
        #expect(Kind(post) == .fetch && post.reason.contains("POST"))
        let head = RFC9111.evaluate(request: Fixture.request(method: "HEAD"), stored: stored, now: Fixture.t0, options: EvaluationOptions())
        #expect(Kind(head) == .useStored)
    }

    @Test func revalidationCarriesValidators() throws {
        let stored = Fixture.stored([("Cache-Control", "max-age=1"), ("ETag", "W/\"x\""), ("Last-Modified", Fixture.date(-50))])
        let decision = RFC9111.evaluate(request: Fixture.request([("Accept", "text/html")]), stored: stored, now: Fixture.at(10), options: EvaluationOptions())
        let conditional = try #require(decision.conditional)
        #expect(conditional.headers["If-None-Match"] == "W/\"x\"")
        #expect(conditional.headers["If-Modified-Since"] == Fixture.date(-50))
        #expect(conditional.headers["Accept"] == "text/html" && conditional.url == Fixture.url)
    }

    @Test func decisionsAreDeterministic() {
        let stored = Fixture.stored([("Cache-Control", "max-age=100, stale-while-revalidate=10"), ("ETag", "\"a\"")])
        for now in stride(from: 0.0, through: 200, by: 7) {
            let a = RFC9111.evaluate(request: Fixture.request(), stored: stored, now: Fixture.at(now), options: EvaluationOptions())
            let b = RFC9111.evaluate(request: Fixture.request(), stored: stored, now: Fixture.at(now), options: EvaluationOptions())
            #expect(a == b)
        }
    }
}
