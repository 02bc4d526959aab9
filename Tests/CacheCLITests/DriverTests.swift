import Foundation
import Testing
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
@testable import CacheCLI

/// Scripted `dlcache driver` sessions, in process, against the loopback origin (Tests/Fixtures/origin.py).
@Suite(.serialized) struct DriverTests {
    @Test func freshHitIsServedWithoutAnOriginRequestAndCarriesAge() async throws {
        try await withDriver { driver in
            try await driver.origin.configure(path: "/a", headers: [("Cache-Control", "max-age=3600")], body: "hello")
            let first = try await driver.roundTrip(id: 1, path: "/a")
            #expect(first.id as? Int == 1)
            #expect(first.status == 200)
            #expect(first.statusText == "OK")
            #expect(first.body == "hello")
            #expect(first.header("Age").isEmpty)

            driver.clock.advance(by: 40)
            let second = try await driver.roundTrip(id: "two", path: "/a")
            #expect(second.stringID == "two")
            #expect(second.status == 200)
            #expect(second.body == "hello")
            // RFC 9111 §4.2.3: resident time 40 s on a response whose apparent age is below one second.
            #expect(second.header("Age") == ["40"])
            #expect(second.header("Cache-Control") == ["max-age=3600"])
            #expect(try await driver.origin.hits("/a").total == 1)
        }
    }

    @Test func revalidationWith304ServesFreshenedHeadersAndAge() async throws {
        try await withDriver { driver in
            try await driver.origin.configure(path: "/v", headers: [("Cache-Control", "max-age=0"), ("X-Version", "1")],
                                              body: "same body", etag: "\"v1\"")
            let first = try await driver.roundTrip(id: 1, path: "/v")
            #expect(first.status == 200)
            #expect(first.header("X-Version") == ["1"])

            // The origin's 304 carries new header values; §4.3.4 freshening must replace the stored ones.
            try await driver.origin.configure(path: "/v", headers: [("Cache-Control", "max-age=60"), ("X-Version", "2")],
                                              body: "same body", etag: "\"v1\"")
            let second = try await driver.roundTrip(id: 2, path: "/v")
            #expect(second.status == 200)
            #expect(second.body == "same body")
            #expect(second.header("X-Version") == ["2"])
            #expect(second.header("Cache-Control") == ["max-age=60"])
            #expect(second.header("ETag") == ["\"v1\""])
            #expect(second.header("Age") == ["0"])
            let hits = try await driver.origin.hits("/v")
            #expect(hits.total == 2)
            #expect(hits.conditional == 1)
            #expect(hits.notModified == 1)

            driver.clock.advance(by: 7)
            let third = try await driver.roundTrip(id: 3, path: "/v")
            #expect(third.body == "same body")
            #expect(third.header("Age") == ["7"])
            #expect(try await driver.origin.hits("/v").total == 2)
        }
    }

    /// Statuses and the reason phrase Python's BaseHTTPRequestHandler sends with each (empty when it has none).
    static let statuses: [(Int, String)] = [
        (299, ""), (999, ""), (404, "Not Found"), (418, "I'm a Teapot"), (503, "Service Unavailable"),
    ]

    @Test("unusual statuses come back as the origin sent them", arguments: statuses)
    func unusualStatus(_ status: Int, _ phrase: String) async throws {
        try await withDriver { driver in
            try await driver.origin.configure(path: "/s", status: status, body: "status body")
            let answer = try await driver.roundTrip(id: status, path: "/s")
            #expect(answer.error == nil, "\(answer.raw)")
            #expect(answer.status == status)
            #expect(answer.body == "status body")
            #expect(answer.statusText == phrase)
        }
    }

    @Test("redirects are returned, not followed", arguments: [301, 302, 307, 308])
    func redirectIsReturnedAsIs(_ status: Int) async throws {
        try await withDriver { driver in
            try await driver.origin.configure(path: "/from", status: status, body: "", redirect: "/to")
            try await driver.origin.configure(path: "/to", body: "target")
            let answer = try await driver.roundTrip(id: 1, path: "/from")
            #expect(answer.error == nil, "\(answer.raw)")
            #expect(answer.status == status)
            #expect(answer.header("Location") == ["/to"])
            #expect(answer.body == "")
            #expect(try await driver.origin.hits("/to").total == 0)

            // A 3xx with a body: the transport must deliver that body when it does not follow the redirect.
            try await driver.origin.configure(path: "/from-body", status: status, body: "moved", redirect: "/to")
            let withBody = try await driver.roundTrip(id: 2, path: "/from-body")
            #expect(withBody.error == nil, "\(withBody.raw)")
            #expect(withBody.status == status)
            #expect(withBody.body == "moved")
            #expect(try await driver.origin.hits("/to").total == 0)
        }
    }

    @Test func duplicateResponseHeadersKeepOrderAndCount() async throws {
        try await withDriver { driver in
            try await driver.origin.configure(path: "/dup", headers: [
                ("Cache-Control", "max-age=60"), ("X-Dup", "a"), ("X-Dup", "b"), ("Set-Cookie", "c=1"), ("Set-Cookie", "d=2"),
                ("X-Zulu", "z"), ("X-Alpha", "a"),
            ], body: "d")
            let first = try await driver.roundTrip(id: 1, path: "/dup")
            let second = try await driver.roundTrip(id: 2, path: "/dup")
            #expect(try await driver.origin.hits("/dup").total == 1)
            for answer in [first, second] {
                #expect(answer.status == 200)
                #expect(answer.header("X-Dup") == ["a", "b"])
                #expect(answer.header("Set-Cookie") == ["c=1", "d=2"])
                let names = answer.headerPairs.map { $0[0].lowercased() }
                let zulu = try #require(names.firstIndex(of: "x-zulu"))
                let alpha = try #require(names.firstIndex(of: "x-alpha"))
                #expect(zulu < alpha, "origin order is X-Zulu, X-Alpha: \(names)")
            }
        }
    }

    @Test func hopByHopAndConnectionNamedHeadersAreDropped() async throws {
        try await withDriver { driver in
            try await driver.origin.configure(path: "/hop", headers: [
                ("Cache-Control", "max-age=60"), ("Connection", "X-Hop"), ("X-Hop", "1"), ("Keep-Alive", "timeout=5"),
                ("X-Kept", "yes"),
            ], body: "h")
            let first = try await driver.roundTrip(id: 1, path: "/hop")
            let second = try await driver.roundTrip(id: 2, path: "/hop")
            for answer in [first, second] {
                #expect(answer.status == 200)
                #expect(answer.header("X-Kept") == ["yes"])
                #expect(answer.header("X-Hop").isEmpty)
                #expect(answer.header("Keep-Alive").isEmpty)
                #expect(answer.header("Connection").isEmpty)
            }
        }
    }

    @Test func requestHeadersArePassedToTheOrigin() async throws {
        try await withDriver { driver in
            try await driver.origin.configure(path: "/echo", headers: [("Cache-Control", "no-store")], body: "x",
                                              echoHeader: "Accept-Language")
            let answer = try await driver.roundTrip(id: 1, path: "/echo", headers: [["Accept-Language", "de-CH"]])
            #expect(answer.body == "x|Accept-Language=de-CH")
        }
    }

    @Test func slowRequestDoesNotBlockAFastOne() async throws {
        try await withDriver { driver in
            try await driver.origin.configure(path: "/slow", body: "slow", delay: 1.5)
            try await driver.origin.configure(path: "/fast", body: "fast")
            driver.send(id: "slow", path: "/slow")
            driver.send(id: "fast", path: "/fast")
            let answers = try await driver.waitForAnswers(2)
            #expect(answers.map(\.stringID) == ["fast", "slow"])
            #expect(answers.map(\.body) == ["fast", "slow"])
            #expect(driver.capture.allWritesWereWholeLines)
        }
    }

    @Test func badLinesInTheMiddleGetErrorLinesAndTheSessionGoesOn() async throws {
        try await withDriver { driver in
            try await driver.origin.configure(path: "/ok", headers: [("Cache-Control", "max-age=60")], body: "ok")
            driver.send(id: 1, path: "/ok")
            _ = try await driver.waitForAnswers(1)
            driver.send("this is not json")
            driver.send(#"{"id": 7, "url": 5}"#)
            driver.send(#"{"id": true, "url": "http://127.0.0.1:1/"}"#)
            driver.send(#"{"id": "m", "method": "G ET", "url": "http://127.0.0.1:1/"}"#)
            driver.send("   ")
            driver.send(id: 2, path: "/ok")
            let answers = try await driver.waitForAnswers(6)
            // Answers come in completion order: match them by id, not by position.
            #expect(answers.count == 6)
            #expect(answers[0].body == "ok")
            let errors = answers.filter { $0.error != nil }
            #expect(errors.count == 4)
            #expect(errors.allSatisfy { $0.status == nil && $0.body == nil })
            #expect(errors.filter { $0.id is NSNull }.count == 2)
            #expect(errors.contains { $0.id as? Int == 7 && $0.error?.contains("url") == true })
            #expect(errors.contains { $0.stringID == "m" && $0.error?.contains("token") == true })
            let last = answers.filter { $0.id as? Int == 2 }
            #expect(last.count == 1)
            #expect(last.first?.body == "ok")
            #expect(try await driver.origin.hits("/ok").total == 1)
        }
    }

    @Test func closingInputWhileRequestsAreInFlightStillAnswersAll() async throws {
        let harness = try await DriverHarness()
        try await harness.origin.configure(path: "/late", body: "late", delay: 1)
        for id in 1...3 { harness.send(id: id, path: "/late", headers: [["X-N", String(id)]]) }
        await harness.closeInput()
        let answers = try harness.capture.lines.map(DriverAnswer.init)
        #expect(Set(answers.compactMap { $0.id as? Int }) == [1, 2, 3])
        #expect(answers.allSatisfy { $0.body == "late" })
        await harness.tearDown()
    }

    @Test func connectionRefusedWithNothingCachedIsAnErrorLine() async throws {
        try await withDriver { driver in
            driver.send(#"{"id": "r", "method": "GET", "url": "http://127.0.0.1:1/nothing", "headers": [], "body": null}"#)
            let answer = try #require(try await driver.waitForAnswers(1).first)
            #expect(answer.stringID == "r")
            #expect(answer.error?.contains("network error") == true)
            #expect(answer.status == nil)
        }
    }

    @Test func onlyIfCachedWithNothingStoredIsA504WithoutAnOriginRequest() async throws {
        try await withDriver { driver in
            try await driver.origin.configure(path: "/oic", headers: [("Cache-Control", "max-age=60")], body: "o")
            let miss = try await driver.roundTrip(id: 1, path: "/oic", headers: [["Cache-Control", "only-if-cached"]])
            #expect(miss.status == 504)
            #expect(miss.statusText == "Gateway Timeout")
            #expect(miss.body == "")
            #expect(try await driver.origin.hits("/oic").total == 0)

            _ = try await driver.roundTrip(id: 2, path: "/oic")
            let hit = try await driver.roundTrip(id: 3, path: "/oic", headers: [["Cache-Control", "only-if-cached"]])
            #expect(hit.status == 200)
            #expect(hit.body == "o")
            #expect(try await driver.origin.hits("/oic").total == 1)
        }
    }

    @Test func unsafeMethodWithBodyInvalidatesTheStoredResponse() async throws {
        try await withDriver { driver in
            try await driver.origin.configure(path: "/p", headers: [("Cache-Control", "max-age=60")], body: "p")
            _ = try await driver.roundTrip(id: 1, path: "/p")
            _ = try await driver.roundTrip(id: 2, path: "/p")
            let post = try await driver.roundTrip(id: 3, path: "/p", method: "POST", headers: [["Content-Type", "text/plain"]],
                                                  body: "payload")
            #expect(post.status == 200)
            _ = try await driver.roundTrip(id: 4, path: "/p")
            let hits = try await driver.origin.hits("/p")
            #expect(hits.methods["POST"] == 1)
            #expect(hits.methods["GET"] == 2)
        }
    }

    @Test func unusualMethodTokenGoesToTheOrigin() async throws {
        try await withDriver { driver in
            // origin.py has no handler for FROB: Python's BaseHTTPRequestHandler answers 501 itself.
            let answer = try await driver.roundTrip(id: 1, path: "/x", method: "FROB")
            #expect(answer.status == 501)
        }
    }

    @Test func nonUTF8BodyBytesBecomeReplacementCharacters() async throws {
        try await withDriver { driver in
            let answer = try await driver.roundTrip(id: 1, path: "/size/300")
            let scalars = try #require(answer.body).unicodeScalars
            #expect(scalars.count == 300)
            #expect(scalars.filter { $0 == "\u{FFFD}" }.count == 128)
            #expect(scalars.prefix(128).map(\.value) == Array(0..<128))
        }
    }

    @Test("--mode shared does not store private responses", arguments: [(CacheMode.private, 1), (CacheMode.shared, 2)])
    func modeSwitchesSemantics(_ mode: CacheMode, _ expectedOriginHits: Int) async throws {
        try await withDriver(mode: mode) { driver in
            try await driver.origin.configure(path: "/priv", headers: [("Cache-Control", "private, max-age=60")], body: "mine")
            _ = try await driver.roundTrip(id: 1, path: "/priv")
            let second = try await driver.roundTrip(id: 2, path: "/priv")
            #expect(second.body == "mine")
            #expect(try await driver.origin.hits("/priv").total == expectedOriginHits)
        }
    }

    @Test("shared mode honours s-maxage over max-age", arguments: [(CacheMode.private, 2), (CacheMode.shared, 1)])
    func sharedMaxAge(_ mode: CacheMode, _ expectedOriginHits: Int) async throws {
        try await withDriver(mode: mode) { driver in
            try await driver.origin.configure(path: "/sm", headers: [("Cache-Control", "max-age=0, s-maxage=600")], body: "s")
            _ = try await driver.roundTrip(id: 1, path: "/sm")
            _ = try await driver.roundTrip(id: 2, path: "/sm")
            #expect(try await driver.origin.hits("/sm").total == expectedOriginHits)
        }
    }
}
