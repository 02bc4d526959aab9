import Foundation
import Testing
@testable import HTTPCacheSemantics

/// 604 responses recorded from real sites (Fixtures/realworld-cache-headers.jsonl, from sitespeedio/pagexray HARs):
/// every one goes through parsing, storability, freshness and the decision; a dozen decisions are hand-computed.
@Suite struct RealWorldHeadersTests {
    struct Entry: Decodable, Sendable {
        var har: String
        var i: Int
        var method: String
        var url: String
        var status: Int
        var request_headers: [[String]]
        var response_headers: [[String]]
    }

    static let entries: [Entry] = load()

    private static func load() -> [Entry] {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/realworld-cache-headers.jsonl")
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Entry.self, from: Data($0.utf8)) }
    }

    static func headers(_ pairs: [[String]]) -> HTTPHeaders {
        HTTPHeaders(pairs.map { ($0.first ?? "", $0.count > 1 ? $0[1] : "") })
    }

    static func entry(_ har: String, _ index: Int) throws -> Entry {
        try #require(entries.first { $0.har.contains(har) && $0.i == index })
    }

    /// The request and the stored response as if received at its own `Date` (or t0 without one).
    static func exchange(_ e: Entry) throws -> (CacheRequest, StoredResponse) {
        let url = try #require(URL(string: e.url))
        let request = CacheRequest(method: e.method, url: url, headers: headers(e.request_headers))
        let response = CacheResponse(status: e.status, headers: headers(e.response_headers))
        let received = HTTPDate.parse(response.headers.first("Date") ?? "") ?? Fixture.t0
        let stored = RFC9111.makeStoredResponse(request: request, response: response, requestTime: received, responseTime: received)
        return (request, stored)
    }

    @Test func allEntriesLoad() {
        #expect(Self.entries.count == 604)
    }

    @Test func everyEntryGoesThroughEverything() throws {
        var invalidExpires = 0, withAge = 0, varyStar = 0, weakTags = 0, badTags = 0, storedPrivate = 0, storedShared = 0
        for e in Self.entries {
            let (request, stored) = try Self.exchange(e)
            let h = stored.response.headers
            let cc = CacheControl.response(h)
            if let expires = h.first("Expires"), HTTPDate.parse(expires) == nil { invalidExpires += 1 }
            if HeaderSyntax.age(h) != nil { withAge += 1 }
            if RFC9111.secondaryKey(vary: h, request: request.headers) == nil { varyStar += 1 }
            if EntityTag.of(h)?.isWeak == true { weakTags += 1 }
            if let value = h.first("ETag") {
                if EntityTag(parsing: value) == nil { badTags += 1 }
                #expect(EntityTag.of(h) != nil, "\(e.har):\(e.i) \(value)")
            }
            let privately = RFC9111.storability(request: request, response: stored.response, mode: .private)
            let shared = RFC9111.storability(request: request, response: stored.response, mode: .shared)
            if privately.isStorable { storedPrivate += 1 }
            if shared.isStorable { storedShared += 1 }
            // Invariants: no-store is never stored; a shared cache is never more permissive here (no s-maxage-only cases).
            if cc.noStore && !cc.mustUnderstand { #expect(!privately.isStorable && !shared.isStorable, "\(e.har):\(e.i)") }
            if shared.isStorable && cc.sMaxAge == nil { #expect(privately.isStorable, "\(e.har):\(e.i)") }
            for mode in CacheMode.allCases {
                let options = EvaluationOptions(mode: mode)
                let lifetime = RFC9111.freshnessLifetime(stored, options: options)
                #expect(lifetime >= 0 && lifetime.isFinite, "\(e.har):\(e.i)")
                for offset in [0.0, 60, 3600, 2_592_000] as [TimeInterval] {
                    let now = stored.responseTime.addingTimeInterval(offset)
                    let age = RFC9111.currentAge(stored, now: now)
                    #expect(age >= offset && age.isFinite)
                    let decision = RFC9111.evaluate(request: request, stored: stored, now: now, options: options)
                    #expect(!decision.reason.isEmpty)
                    #expect(decision == RFC9111.evaluate(request: request, stored: stored, now: now, options: options))
                    if case .useStored = decision { #expect(RFC9111.isFresh(stored, now: now, options: options), "\(e.har):\(e.i)") }
                    let served = RFC9111.responseHeadersForServing(stored, now: now)
                    #expect(served.values(for: "Age").count == 1)
                }
            }
        }
        // 9 × `-1`, 8 × `0`, 6 × `Mon, 01-Jan-2010 12:00:00 GMT` (dashes in an IMF-fixdate, RFC 9110 §5.6.7).
        #expect(invalidExpires == 23)
        #expect(withAge == 144)
        #expect(varyStar == 1)
        // 33 start with W/, 2 of them unquoted (`W/000073974-17EC3303DED`), accepted leniently.
        #expect(weakTags == 33)
        #expect(badTags == 60)  // unquoted tags such as wikipedia:8 `fc8dc7b8…`, checked independently
        #expect(storedPrivate > storedShared && storedShared > 300)
    }

    // MARK: - Hand-computed decisions

    /// wikipedia:0 — `private, s-maxage=0, max-age=0, must-revalidate`, Age 997, Last-Modified, no ETag.
    @Test func wikipediaMainPage() throws {
        let (request, stored) = try Self.exchange(try Self.entry("wikipedia", 0))
        #expect(RFC9111.storability(request: request, response: stored.response, mode: .private) == .store)
        #expect(!RFC9111.storability(request: request, response: stored.response, mode: .shared).isStorable)
        #expect(RFC9111.currentAge(stored, now: stored.responseTime) == 997)
        let decision = RFC9111.evaluate(request: request, stored: stored, now: stored.responseTime, options: EvaluationOptions())
        #expect(Kind(decision) == .revalidate)
        #expect(decision.conditional?.headers["If-Modified-Since"] == "Sat, 29 Aug 2015 19:27:47 GMT")
        #expect(decision.conditional?.headers["If-None-Match"] == nil)
    }

    /// wikipedia:1 — `public, max-age=300, s-maxage=300`, Age 73, Expires = Date + 227: max-age wins; stale at +227.
    @Test func wikipediaStartupModule() throws {
        let (request, stored) = try Self.exchange(try Self.entry("wikipedia", 1))
        let options = EvaluationOptions()
        #expect(RFC9111.freshnessLifetime(stored, options: options) == 300)
        #expect(RFC9111.currentAge(stored, now: stored.responseTime) == 73)
        let fresh = RFC9111.evaluate(request: request, stored: stored, now: stored.responseTime.addingTimeInterval(226), options: options)
        #expect(Kind(fresh) == .useStored)
        let stale = RFC9111.evaluate(request: request, stored: stored, now: stored.responseTime.addingTimeInterval(227), options: options)
        #expect(Kind(stale) == .revalidate && stale.conditional?.headers["If-None-Match"] == "W/\"hmVytC+d\"")
        #expect(RFC9111.storability(request: request, response: stored.response, mode: .shared) == .store)
    }

    /// wikipedia:8 — heuristic: Date − Last-Modified = 60,035,437 s; 10 % = 6,003,543.7 s; Age 43292.
    @Test func wikipediaHeuristicLogo() throws {
        let (request, stored) = try Self.exchange(try Self.entry("wikipedia", 8))
        let uncapped = EvaluationOptions(heuristicCap: 1e9)
        #expect(abs(RFC9111.freshnessLifetime(stored, options: uncapped) - 6_003_543.7) < 0.001)
        #expect(RFC9111.freshnessLifetime(stored, options: EvaluationOptions()) == 604_800)
        #expect(RFC9111.currentAge(stored, now: stored.responseTime) == 43_292)
        let later = stored.responseTime.addingTimeInterval(604_800 - 43_292)
        #expect(Kind(RFC9111.evaluate(request: request, stored: stored, now: later.addingTimeInterval(-1), options: EvaluationOptions())) == .useStored)
        let stale = RFC9111.evaluate(request: request, stored: stored, now: later, options: EvaluationOptions())
        #expect(stale.conditional?.headers["If-None-Match"] == "fc8dc7b81dbc12d24165d521ae29fd1c")  // unquoted, sent back verbatim
    }

    /// nytimes:173 — `no-cache`, Pragma no-cache, `Expires: -1`, no validator: stored, but always refetched.
    @Test func nytimesNoCacheExpiresMinusOne() throws {
        let (request, stored) = try Self.exchange(try Self.entry("nytimes", 173))
        #expect(RFC9111.storability(request: request, response: stored.response, mode: .private) == .store)
        #expect(RFC9111.freshnessLifetime(stored, options: EvaluationOptions()) == 0)
        let decision = RFC9111.evaluate(request: request, stored: stored, now: stored.responseTime, options: EvaluationOptions())
        #expect(Kind(decision) == .fetch && decision.reason.contains("no-cache"))
    }

    /// nytimes:154, nytimes:104 (no Date), nytimes:200 (307) — no-store variants: never stored.
    @Test(arguments: [154, 104, 200])
    func nytimesNoStore(index: Int) throws {
        let (request, stored) = try Self.exchange(try Self.entry("nytimes", index))
        guard case .doNotStore(let reason) = RFC9111.storability(request: request, response: stored.response, mode: .private) else {
            Issue.record("nytimes:\(index) should not be stored")
            return
        }
        #expect(reason.contains("no-store"))
    }

    /// nytimes:130 — `private, max-age=1800, s-max-age=1800` (misspelt): private cache 1800 s, shared refuses.
    @Test func nytimesMisspeltSMaxAge() throws {
        let (request, stored) = try Self.exchange(try Self.entry("nytimes", 130))
        let cc = CacheControl.response(stored.response.headers)
        #expect(cc.sMaxAge == nil && cc.extensions.map(\.name) == ["s-max-age"])
        #expect(RFC9111.freshnessLifetime(stored, options: EvaluationOptions()) == 1800)
        #expect(RFC9111.storability(request: request, response: stored.response, mode: .private) == .store)
        #expect(!RFC9111.storability(request: request, response: stored.response, mode: .shared).isStorable)
    }

    /// nytimes:160 — 302 with `private, no-cache, no-cache=Set-Cookie, no-store, proxy-revalidate`.
    @Test func nytimesQualifiedNoCache() throws {
        let (request, stored) = try Self.exchange(try Self.entry("nytimes", 160))
        let cc = CacheControl.response(stored.response.headers)
        #expect(cc.noCache && cc.noCacheFields == ["set-cookie"] && cc.noStore && cc.proxyRevalidate)
        #expect(!RFC9111.storability(request: request, response: stored.response, mode: .private).isStorable)
        #expect(RFC9111.invalidatedKeys(request: request, response: stored.response).isEmpty)
    }

    /// ferguson:173 — POST answered with `Vary: *`.
    @Test func fergusonVaryStarPost() throws {
        let (request, stored) = try Self.exchange(try Self.entry("ferguson", 173))
        #expect(RFC9111.secondaryKey(vary: stored.response.headers, request: request.headers) == nil)
        #expect(!RFC9111.storability(request: request, response: stored.response, mode: .private).isStorable)
        #expect(RFC9111.invalidatedKeys(request: request, response: stored.response).count == 2)
    }

    /// ferguson:70 — `private, max-age=300, stale-while-revalidate=60, stale-if-error=120`.
    @Test func fergusonStaleExtensions() throws {
        let (request, stored) = try Self.exchange(try Self.entry("ferguson", 70))
        let options = EvaluationOptions()
        let at = { (s: Double) in stored.responseTime.addingTimeInterval(s) }
        #expect(Kind(RFC9111.evaluate(request: request, stored: stored, now: at(299), options: options)) == .useStored)
        let swr = RFC9111.evaluate(request: request, stored: stored, now: at(330), options: options)
        #expect(Kind(swr) == .useStoredAndRevalidate && swr.conditional == request)  // no validator: plain request
        #expect(Kind(RFC9111.evaluate(request: request, stored: stored, now: at(361), options: options)) == .fetch)
        #expect(Kind(RFC9111.errorDecision(stored: stored, request: request, now: at(400), options: options, status: nil)) == .useStored)
        #expect(Kind(RFC9111.errorDecision(stored: stored, request: request, now: at(421), options: options, status: 503)) == .fetch)
        #expect(!RFC9111.storability(request: request, response: stored.response, mode: .shared).isStorable)
    }

    /// nytimes:80 — 206 with Content-Range: partial content is not stored.
    @Test func nytimesPartialContent() throws {
        let (request, stored) = try Self.exchange(try Self.entry("nytimes", 80))
        #expect(RFC9111.storability(request: request, response: stored.response, mode: .private)
            == .doNotStore(reason: "partial content not supported (206; RFC 9111 §3.4)"))
    }

    /// ferguson:63 — `max-age=21600` with Set-Cookie: stored by a private cache, not by a shared one (the cookie is
    /// one client's and the response is neither public nor s-maxage); both validators sent.
    @Test func fergusonCookieWithMaxAge() throws {
        let (request, stored) = try Self.exchange(try Self.entry("ferguson", 63))
        #expect(RFC9111.storability(request: request, response: stored.response, mode: .private) == .store)
        #expect(!RFC9111.storability(request: request, response: stored.response, mode: .shared).isStorable)
        #expect(RFC9111.freshnessLifetime(stored, options: EvaluationOptions()) == 21_600)
        let stale = RFC9111.evaluate(request: request, stored: stored, now: stored.responseTime.addingTimeInterval(21_600), options: EvaluationOptions())
        #expect(stale.conditional?.headers["If-Modified-Since"] == "Mon, 26 Apr 2021 16:10:06 GMT")
        #expect(stale.conditional?.headers["If-None-Match"]?.hasPrefix("\"d1dbb955") == true)
    }

    /// wikipedia:33 and nytimes:246 — real 304s select the stored response by strong Last-Modified / strong ETag.
    @Test func realNotModifiedSelection() throws {
        let lm = try Self.entry("wikipedia", 33)
        let notModified = CacheResponse(status: 304, headers: Self.headers(lm.response_headers))
        let matching = Fixture.stored([("Last-Modified", "Sat, 29 Aug 2015 11:33:20 GMT")])
        let other = Fixture.stored([("Last-Modified", "Sat, 29 Aug 2015 11:33:21 GMT")])
        #expect(RFC9111.selectForFreshening([other, matching], notModified: notModified) == [1])
        let tag = try Self.entry("nytimes", 246)
        let tagged = CacheResponse(status: 304, headers: Self.headers(tag.response_headers))
        let storedTag = Fixture.stored([("ETag", "\"c8f049336f99adb7aca5f32d6d5b0139\"")])
        #expect(RFC9111.selectForFreshening([storedTag], notModified: tagged) == [0])
        let freshened = RFC9111.freshen(storedTag, with: tagged, requestTime: Fixture.t0, responseTime: Fixture.t0)
        #expect(CacheControl.response(freshened.response.headers).maxAge == 2_592_000)
        #expect(freshened.response.headers["Age"] == "43818")
    }
}
