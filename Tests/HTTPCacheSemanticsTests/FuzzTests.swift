import Foundation
import Testing
@testable import HTTPCacheSemantics

/// Property tests: random header bytes (seeded, bounded) never crash the parsers or decisions, and every result
/// keeps the invariants its RFC rule promises (round trips, bounds, rules that forbid storing or serving).
/// Covers RFC 9110 §5.6 grammar robustness and RFC 9111 "bad input becomes a meaning".
@Suite struct FuzzTests {
    /// SplitMix64: a tiny deterministic generator so every run feeds the same inputs.
    struct SeededRandom: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let vocabulary = [
        "max-age", "s-maxage", "no-cache", "no-store", "private", "public", "must-revalidate", "immutable",
        "stale-while-revalidate", "stale-if-error", "max-stale", "min-fresh", "only-if-cached", "must-understand",
        "=", ",", " ", "\t", "\"", "\\", "0", "60", "-1", "99999999999999999999", "W/", "*", "GMT", "Sun", "Nov",
        "06", "1994", "08:49:37", "-", ":", ";", "\u{0}", "\u{7F}", "é", "\r\n", "Set-Cookie",
    ]

    /// A random value: half raw bytes (possibly invalid UTF-8), half vocabulary words.
    static func randomValue(_ rng: inout SeededRandom) -> String {
        let length = Int.random(in: 0...24, using: &rng)
        if Bool.random(using: &rng) {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            return String(decoding: bytes, as: UTF8.self)
        }
        return (0..<length).map { _ in vocabulary.randomElement(using: &rng) ?? "" }.joined()
    }

    static let names = ["Cache-Control", "Expires", "Date", "Last-Modified", "Age", "ETag", "Vary", "Pragma",
                        "Connection", "Content-Length", "Location", "Accept", "X-Junk"]

    static func randomHeaders(_ rng: inout SeededRandom) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for _ in 0..<Int.random(in: 0...6, using: &rng) {
            headers.add(names.randomElement(using: &rng) ?? "X", randomValue(&rng))
        }
        return headers
    }

    @Test func parsersNeverCrashAndKeepTheirInvariants() {
        var rng = SeededRandom(state: 0xC0FFEE)
        let ceiling = HeaderSyntax.deltaSecondsCeiling
        for _ in 0..<4000 {
            let value = Self.randomValue(&rng)
            // Delta-seconds arguments are never negative and never above the ceiling (RFC 9111 §1.2.2).
            let directives = CacheControl(parsing: value)
            for seconds in [directives.maxAge, directives.sMaxAge, directives.staleWhileRevalidate,
                            directives.staleIfError, directives.minFresh].compactMap({ $0 }) {
                #expect(seconds >= 0 && seconds <= ceiling, "\(seconds) from \(value.debugDescription)")
            }
            // A parsed date has whole seconds and survives formatting as an IMF-fixdate (RFC 9110 §5.6.7).
            if let date = HTTPDate.parse(value) {
                #expect(date.timeIntervalSince1970.rounded(.down) == date.timeIntervalSince1970)
                let formatted = HTTPDate.format(date)
                #expect(formatted.count == 29 && formatted.hasSuffix(" GMT"), "\(formatted)")
                #expect(HTTPDate.parse(formatted) == date)
            }
            // Entity tags round-trip through their text, alone and in lists (RFC 9110 §8.8.3).
            if let tag = EntityTag(parsing: value) { #expect(EntityTag(parsing: tag.description) == tag) }
            for tag in EntityTag.parseList(value).tags {
                #expect(EntityTag(parsing: tag.description) == tag, "\(tag) from \(value.debugDescription)")
            }
            // List members are never empty and carry no surrounding optional whitespace (RFC 9110 §5.6.1).
            let members = HeaderSyntax.listMembers(value)
            #expect(members.allSatisfy { !$0.isEmpty })
            #expect(members.allSatisfy { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \t")) == $0 },
                    "\(members) from \(value.debugDescription)")
            if let seconds = HeaderSyntax.deltaSeconds(value) { #expect(seconds >= 0 && seconds <= HeaderSyntax.deltaSecondsCeiling) }
        }
    }

    @Test func decisionsNeverCrashAndKeepTheRules() throws {
        var rng = SeededRandom(state: 42)
        let url = try #require(URL(string: "https://example.com/f"))
        for _ in 0..<1500 {
            let request = CacheRequest(method: Bool.random(using: &rng) ? "GET" : "POST", url: url, headers: Self.randomHeaders(&rng))
            let response = CacheResponse(status: [200, 206, 302, 304, 404, 500, 299, 999].randomElement(using: &rng) ?? 200,
                                         headers: Self.randomHeaders(&rng))
            let mode: CacheMode = Bool.random(using: &rng) ? .private : .shared
            let storability = RFC9111.storability(request: request, response: response, mode: mode)
            if storability.isStorable {
                // Only GET and HEAD, a final status other than 304 and 206, no request no-store, no Vary: *
                // (RFC 9111 §3, §3.3, §5.2.1.5, §4.1).
                #expect(request.method == "GET" || request.method == "HEAD")
                #expect(response.status >= 200 && response.status <= 599 && response.status != 304
                        && response.status != 206)
                #expect(!CacheControl(parsing: request.headers.values(for: "Cache-Control").joined(separator: ", ")).noStore)
                #expect(!response.headers.values(for: "Vary").contains { $0.trimmingCharacters(in: .whitespaces) == "*" })
            }
            let received = Fixture.at(Double(Int.random(in: -1000...1000, using: &rng)))
            let stored = RFC9111.makeStoredResponse(request: request, response: response, requestTime: received, responseTime: received)
            let now = received.addingTimeInterval(Double(Int.random(in: -100...100_000, using: &rng)))
            let policy = CachePolicy.allCases.randomElement(using: &rng) ?? .useProtocolCachePolicy
            let options = EvaluationOptions(mode: mode, policy: policy)
            let lifetime = RFC9111.freshnessLifetime(stored, options: options)
            #expect(lifetime >= 0 && lifetime.isFinite)
            #expect(RFC9111.currentAge(stored, now: now) >= 0)
            let decision = RFC9111.evaluate(request: request, stored: stored, now: now, options: options)
            // Serving a stored response stale (age at or past its lifetime) needs a rule that allows it; the
            // reason says which, so it is never one that says "fresh" (RFC 9111 §4.2.4).
            if decision.servesStored && RFC9111.currentAge(stored, now: now) >= lifetime + 1 {
                #expect(!decision.reason.hasPrefix("fresh"), "\(decision)")
            }
            #expect(!decision.reason.isEmpty)
            let error = RFC9111.errorDecision(stored: stored, request: request, now: now, options: options, status: nil)
            #expect(!error.reason.isEmpty)
            let notModified = CacheResponse(status: 304, headers: Self.randomHeaders(&rng))
            let freshened = RFC9111.freshen(stored, with: notModified, requestTime: now, responseTime: now)
            // A 304 updates header fields, never the stored status (RFC 9111 §4.3.4).
            #expect(freshened.response.status == stored.response.status)
            #expect(RFC9111.selectForFreshening([stored, freshened], notModified: notModified).allSatisfy { $0 == 0 || $0 == 1 })
            #expect(RFC9111.responseHeadersForServing(stored, now: now).values(for: "Age").count == 1)
            _ = RFC9111.invalidatedKeys(request: request, response: response)
            #expect(RFC9111.matches(stored: stored, request: request) == (RFC9111.secondaryKey(vary: response.headers, request: request.headers) != nil))
        }
    }

    static let directives = [
        "max-age=0", "max-age=60", "max-age=600", "s-maxage=30", "no-cache", "no-store", "private", "public",
        "must-revalidate", "proxy-revalidate", "immutable", "stale-while-revalidate=30", "stale-if-error=60",
        "must-understand", "max-age=abc", "no-cache=\"Set-Cookie\"",
    ]
    static let requestDirectives = ["no-cache", "max-age=10", "max-stale", "max-stale=20", "min-fresh=5", "only-if-cached", "no-store"]

    /// Well-formed but random combinations: RFC invariants that must hold whatever the mix.
    @Test func semanticInvariantsOnStructuredHeaders() throws {
        var rng = SeededRandom(state: 7)
        for _ in 0..<500 {
            var headers: HTTPHeaders = [("Date", Fixture.date(0))]
            let picked = Self.directives.filter { _ in Int.random(in: 0..<5, using: &rng) == 0 }
            if !picked.isEmpty { headers.add("Cache-Control", picked.joined(separator: ", ")) }
            if Bool.random(using: &rng) { headers.add("Last-Modified", Fixture.date(-Double(Int.random(in: 0...100_000, using: &rng)))) }
            if Bool.random(using: &rng) { headers.add("ETag", "\"v\"") }
            if Bool.random(using: &rng) { headers.add("Age", String(Int.random(in: 0...700, using: &rng))) }
            if Int.random(in: 0..<4, using: &rng) == 0 { headers.add("Expires", Fixture.date(Double(Int.random(in: -100...1000, using: &rng)))) }
            let requestPicked = Self.requestDirectives.filter { _ in Int.random(in: 0..<6, using: &rng) == 0 }
            let requestHeaders: HTTPHeaders = requestPicked.isEmpty ? [] : [("Cache-Control", requestPicked.joined(separator: ", "))]
            let request = Fixture.request(requestHeaders)
            let response = CacheResponse(status: [200, 200, 203, 302, 404].randomElement(using: &rng) ?? 200, headers: headers)
            let cc = CacheControl.response(headers)
            let privately = RFC9111.storability(request: request, response: response, mode: .private)
            let shared = RFC9111.storability(request: request, response: response, mode: .shared)
            if cc.noStore && !cc.mustUnderstand { #expect(!privately.isStorable && !shared.isStorable) }
            if shared.isStorable && cc.sMaxAge == nil { #expect(privately.isStorable) }
            if requestPicked.contains("no-store") { #expect(!privately.isStorable) }

            let stored = Fixture.stored(headers, status: response.status)
            let mode: CacheMode = Bool.random(using: &rng) ? .private : .shared
            let options = EvaluationOptions(mode: mode)
            var wasFresh = true
            for now in stride(from: 0.0, through: 2000, by: 181) {
                let fresh = RFC9111.isFresh(stored, now: Fixture.at(now), options: options)
                #expect(!fresh || wasFresh, "freshness must not come back")
                wasFresh = fresh
                let decision = RFC9111.evaluate(request: request, stored: stored, now: Fixture.at(now), options: options)
                let requestCC = CacheControl.request(requestHeaders)
                if case .useStored = decision {
                    #expect(!cc.noCache && !requestCC.noCache, "no-cache must validate: \(decision.reason)")
                    #expect(fresh || requestCC.maxStale != nil || cc.staleWhileRevalidate != nil, "\(decision.reason)")
                    if !fresh { #expect(!cc.mustRevalidate, "must-revalidate served stale: \(decision.reason)") }
                }
                if requestCC.onlyIfCached { #expect(decision.conditional == nil || decision.servesStored) }
                if case .revalidate(let conditional, _) = decision {
                    #expect(conditional.headers.contains("If-None-Match") || conditional.headers.contains("If-Modified-Since"))
                }
            }
        }
    }
}
