import Foundation
import Testing
@testable import HTTPCacheSemantics

/// RFC 9111 §4.2: freshness lifetime (§4.2.1), heuristic freshness (§4.2.2), current age (§4.2.3).
@Suite struct FreshnessTests {
    /// (response headers, mode, expected lifetime in seconds); Date is t0 unless given.
    @Test(arguments: [
        (["Cache-Control: max-age=300"], CacheMode.private, 300.0),
        (["Cache-Control: max-age=300, s-maxage=60"], .private, 300),
        (["Cache-Control: max-age=300, s-maxage=60"], .shared, 60),
        (["Cache-Control: s-maxage=60"], .private, 0),  // no Last-Modified → heuristic 0
        (["Cache-Control: max-age=300", "Expires: \(Fixture.date(10))"], .private, 300),  // max-age wins over Expires
        (["Expires: \(Fixture.date(120))"], .private, 120),
        (["Expires: \(Fixture.date(-120))"], .private, 0),
        (["Expires: 0"], .private, 0),
        (["Expires: -1"], .private, 0),
        (["Expires: 0", "Last-Modified: \(Fixture.date(-100_000))"], .private, 0),  // invalid Expires = stale, no heuristic
        (["Expires: \(Fixture.date(60))", "Expires: \(Fixture.date(600))"], .private, 0),  // conflicting duplicates
        (["Expires: \(Fixture.date(60))", "Expires: \(Fixture.date(60))"], .private, 60),
        (["Cache-Control: max-age=-5"], .private, 0),
        (["Cache-Control: max-age=abc", "Expires: \(Fixture.date(600))"], .private, 0),
        (["Cache-Control: max-age=99999999999"], .private, 2_147_483_648),
        (["Last-Modified: \(Fixture.date(-100_000))"], .private, 10_000),  // heuristic 10%
        (["Last-Modified: \(Fixture.date(-100_000_000))"], .private, 604_800),  // capped at 7 days
        (["Last-Modified: \(Fixture.date(500))"], .private, 0),  // Last-Modified in the future
        (["Last-Modified: garbage"], .private, 0),
        (["Cache-Control: no-cache", "Last-Modified: \(Fixture.date(-100_000))"], .private, 10_000),  // no-cache is not a lifetime
    ] as [([String], CacheMode, Double)])
    func lifetime(headers: [String], mode: CacheMode, expected: Double) {
        let stored = Fixture.stored(Fixture.headers(headers))
        #expect(RFC9111.freshnessLifetime(stored, options: EvaluationOptions(mode: mode)) == expected)
    }

    @Test func expiresWithoutDateUsesResponseTime() {
        let stored = StoredResponse(
            response: CacheResponse(status: 200, headers: [("Expires", Fixture.date(100))]),
            requestTime: Fixture.at(-5), responseTime: Fixture.at(40))
        #expect(RFC9111.freshnessLifetime(stored, options: EvaluationOptions()) == 60)
    }

    @Test(arguments: [
        (200, true), (203, true), (204, true), (300, true), (301, true), (308, true), (404, true), (405, true),
        (410, true), (414, true), (501, true), (302, false), (307, false), (303, false), (500, false),
    ])
    func heuristicOnlyForHeuristicStatuses(status: Int, heuristic: Bool) {
        let stored = Fixture.stored([("Last-Modified", Fixture.date(-1000))], status: status)
        #expect((RFC9111.freshnessLifetime(stored, options: EvaluationOptions()) == 100) == heuristic)
    }

    @Test func publicAllowsHeuristicForOtherStatuses() {
        let stored = Fixture.stored([("Last-Modified", Fixture.date(-1000)), ("Cache-Control", "public")], status: 302)
        #expect(RFC9111.freshnessLifetime(stored, options: EvaluationOptions()) == 100)
    }

    @Test func heuristicFractionAndCapAreOptions() {
        let stored = Fixture.stored([("Last-Modified", Fixture.date(-1000))])
        #expect(RFC9111.freshnessLifetime(stored, options: EvaluationOptions(heuristicFraction: 0.5)) == 500)
        #expect(RFC9111.freshnessLifetime(stored, options: EvaluationOptions(heuristicCap: 30)) == 30)
    }

    /// §4.2.3 worked through: (Date offset, Age header, request_time, response_time, now) → current age.
    @Test(arguments: [
        (0.0, nil, 0.0, 0.0, 0.0, 0.0),
        (0, nil, 0, 0, 100, 100),                 // resident time
        (0, "50", 0, 0, 100, 150),                // Age header adds
        (0, "50", 0, 2, 100, 150),                // response_delay 2 + Age 50 = 52 vs apparent 2 → 52 + 98
        (-30, nil, 0, 0, 0, 30),                  // server clock behind: apparent age 30
        (30, nil, 0, 0, 0, 0),                    // server clock ahead: apparent age clamps at 0
        (-30, "10", 0, 0, 0, 30),                 // max(apparent 30, corrected 10)
        (0, "abc", 0, 0, 10, 10),                 // invalid Age ignored
        (0, "40, 90", 0, 0, 0, 40),               // list-valued Age: first member
        (0, "-5", 0, 0, 0, 0),
        (0, nil, 0, 0, -50, 0),                   // clock went backwards: resident time 0
    ] as [(Double, String?, Double, Double, Double, Double)])
    func currentAge(dateOffset: Double, age: String?, requestTime: Double, responseTime: Double, now: Double, expected: Double) {
        var headers: HTTPHeaders = [("Date", Fixture.date(dateOffset))]
        if let age { headers.add("Age", age) }
        let stored = StoredResponse(response: CacheResponse(status: 200, headers: headers),
                                    requestTime: Fixture.at(requestTime), responseTime: Fixture.at(responseTime))
        #expect(RFC9111.currentAge(stored, now: Fixture.at(now)) == expected)
    }

    @Test func missingDateMeansNoApparentAge() {
        let stored = Fixture.stored([("Age", "5")], addDate: false)
        #expect(RFC9111.currentAge(stored, now: Fixture.at(10)) == 15)
    }

    @Test(arguments: [(0.0, true), (299, true), (300, false), (1000, false)])
    func freshUntilLifetime(now: Double, fresh: Bool) {
        let stored = Fixture.stored([("Cache-Control", "max-age=300")])
        #expect(RFC9111.isFresh(stored, now: Fixture.at(now), options: EvaluationOptions()) == fresh)
    }

    @Test func ageAboveMaxAgeIsStaleOnArrival() {
        let stored = Fixture.stored([("Cache-Control", "max-age=60"), ("Age", "997")])
        #expect(!RFC9111.isFresh(stored, now: Fixture.t0, options: EvaluationOptions()))
    }

    @Test func callerLifetimesReplaceTheServers() {
        let options = EvaluationOptions(lifetimeOverride: 100)
        let noStore = Fixture.stored([("Cache-Control", "max-age=5"), ("Age", "997")])
        #expect(RFC9111.isFresh(noStore, now: Fixture.at(99), options: options))
        #expect(!RFC9111.isFresh(noStore, now: Fixture.at(100), options: options))
        // A stored override expiry wins over the option.
        let overridden = Fixture.stored([("Cache-Control", "max-age=5")], overrideExpiry: Fixture.at(50))
        #expect(RFC9111.isFresh(overridden, now: Fixture.at(49), options: options))
        #expect(!RFC9111.isFresh(overridden, now: Fixture.at(50), options: options))
        // A pending sliding lifetime counts from receipt.
        let sliding = Fixture.stored([], sliding: 30)
        #expect(RFC9111.isFresh(sliding, now: Fixture.at(29), options: EvaluationOptions()))
        #expect(!RFC9111.isFresh(sliding, now: Fixture.at(31), options: EvaluationOptions()))
        let renewed = RFC9111.renewedAfterHit(sliding, now: Fixture.at(29))
        #expect(renewed.overrideExpiry == Fixture.at(59))
        #expect(RFC9111.renewedAfterHit(noStore, now: Fixture.at(1)) == noStore)
    }

    @Test(arguments: [Double.infinity, -.infinity, .nan, 1e300, -1e300])
    func absurdCallerLifetimesDoNotTrap(lifetime: Double) {
        let options = EvaluationOptions(lifetimeOverride: lifetime, heuristicFraction: lifetime, heuristicCap: lifetime)
        let stored = RFC9111.makeStoredResponse(request: Fixture.request(), response: CacheResponse(status: 200, headers: [("Last-Modified", Fixture.date(-9))]),
                                                requestTime: Fixture.t0, responseTime: Fixture.t0, options: options, slidingLifetime: lifetime)
        let decision = RFC9111.evaluate(request: Fixture.request(), stored: stored, now: Fixture.at(1), options: options)
        #expect(!decision.reason.isEmpty)
        #expect(RFC9111.responseHeadersForServing(stored, now: Fixture.at(1)).values(for: "Age") == ["1"])
        let fresh = RFC9111.freshen(stored, with: CacheResponse(status: 304, headers: []), requestTime: Fixture.at(2), responseTime: Fixture.at(2))
        #expect(fresh.responseTime == Fixture.at(2))
        #expect(!RFC9111.errorDecision(stored: stored, request: Fixture.request(), now: Fixture.at(3), options: options, status: nil).reason.isEmpty)
    }

    @Test func ignoringServerCacheControlFallsBackToHeuristic() {
        let stored = Fixture.stored([("Cache-Control", "max-age=999999"), ("Expires", Fixture.date(5000)), ("Last-Modified", Fixture.date(-1000))])
        #expect(RFC9111.freshnessLifetime(stored, options: EvaluationOptions(ignoreServerCacheControl: true)) == 100)
        #expect(RFC9111.freshnessLifetime(stored, options: EvaluationOptions(ignoreServerCacheControl: true, lifetimeOverride: 7)) == 7)
    }

    @Test func makeStoredResponseRecordsOverridesAndVary() {
        let request = Fixture.request([("Accept-Encoding", "gzip"), ("Accept", "*/*")])
        let response = CacheResponse(status: 200, headers: [("Vary", "Accept-Encoding")])
        let stored = RFC9111.makeStoredResponse(request: request, response: response, requestTime: Fixture.t0,
                                                responseTime: Fixture.at(1), options: EvaluationOptions(lifetimeOverride: 60))
        #expect(stored.overrideExpiry == Fixture.at(61))
        #expect(stored.varyingRequestHeaders.pairs == [["Accept-Encoding", "gzip"]])
        let sliding = RFC9111.makeStoredResponse(request: request, response: response, requestTime: Fixture.t0,
                                                 responseTime: Fixture.at(1), slidingLifetime: 10)
        #expect(sliding.overrideExpiry == Fixture.at(11) && sliding.slidingLifetime == 10)
    }

    @Test func aRequestedSlidingLifetimeReplacesTheStoredOne() {
        let plain = Fixture.stored([("Cache-Control", "max-age=5")])
        let renewed = RFC9111.renewedAfterHit(plain, now: Fixture.at(10), requestedSliding: 20)
        #expect(renewed.slidingLifetime == 20 && renewed.overrideExpiry == Fixture.at(30))
        let sliding = Fixture.stored([], sliding: 30)
        #expect(RFC9111.renewedAfterHit(sliding, now: Fixture.at(10), requestedSliding: 5).overrideExpiry == Fixture.at(15))
        #expect(RFC9111.renewedAfterHit(plain, now: Fixture.at(10), requestedSliding: nil) == plain)
    }

    @Test func fresheningWithACallerLifetimeRestartsTheExpiryFromTheNewResponse() {
        let stored = Fixture.stored([("ETag", "\"a\"")], overrideExpiry: Fixture.at(50))
        let notModified = CacheResponse(status: 304, headers: [("ETag", "\"a\"")])
        let kept = RFC9111.freshen(stored, with: notModified, requestTime: Fixture.at(99), responseTime: Fixture.at(100))
        #expect(kept.overrideExpiry == Fixture.at(150))
        let overridden = RFC9111.freshen(stored, with: notModified, requestTime: Fixture.at(99), responseTime: Fixture.at(100),
                                         options: EvaluationOptions(lifetimeOverride: 7))
        #expect(overridden.overrideExpiry == Fixture.at(107))
    }

    /// (response headers, caller expiry, ignore server cache control, reported fresh at t0 + 1)
    @Test(arguments: [
        (["Cache-Control: max-age=60"], false, false, true),
        (["Cache-Control: max-age=60, no-cache"], false, false, false),
        (["Cache-Control: max-age=60, no-cache"], true, false, true),
        (["Cache-Control: max-age=60, no-cache"], false, true, false),  // ignored cache control: heuristic 0
        (["Cache-Control: no-cache"], true, false, true),
    ])
    func reportedFreshnessTreatsNoCacheAsNotFresh(headers: [String], callerExpiry: Bool, ignore: Bool, fresh: Bool) {
        let stored = Fixture.stored(Fixture.headers(headers), overrideExpiry: callerExpiry ? Fixture.at(60) : nil)
        let reported = RFC9111.reportedFreshness(stored, now: Fixture.at(1),
                                                 options: EvaluationOptions(ignoreServerCacheControl: ignore))
        #expect(reported.isFresh == fresh)
        #expect(reported.age == 1)
    }
}
