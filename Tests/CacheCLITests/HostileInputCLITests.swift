import Foundation
import Testing
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
@testable import CacheCLI

/// The CLI and the driver against a hostile caller and a hostile origin: framing headers are a usage error
/// (`get`, exit 64) or an error line (`driver`) and never reach the origin; an origin's unsolicited 304 / 206,
/// a trickled body under `--stall-timeout`, and `--max-time` on every fetching command end in a failure.
@Suite(.serialized) struct HostileInputCLITests {
    @Test func getRefusesFramingHeadersAsAUsageError() async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        for header in ["Content-Length: 0", "Transfer-Encoding: chunked", "Connection: close", "Expect: 100-continue",
                       "Host: evil.example", "TE: trailers", "Upgrade: h2c", "X-Bell: a\u{7}b", "content-length:5"] {
            let run = await cli.run(["get", "-H", header, origin.url("/a").absoluteString])
            #expect(run.code == 64, "\(header): \(run.code) \(run.err)")
            #expect(run.err.contains("-H"))
        }
        #expect(try origin.requests().isEmpty)
    }

    @Test func getAcceptsTheURLsOwnHost() async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/own", .http(body: "own"))
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", "-H", "Host: \(origin.authority)", origin.url("/own").absoluteString])
        #expect(run.code == 0 && run.out == "own", "\(run.err)")
        #expect(try origin.requests("/own").first?.values("Host") == [origin.authority])
    }

    /// Issue 10 item 1 in the driver: the smuggling POST gets an error line, the victim its own content, and the
    /// origin sees the victim request alone.
    @Test func driverAnswersAFramingHeaderWithAnErrorLineAndSendsNothing() async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/form", .http(body: "ok", then: .keepAlive))
        try origin.script("/smuggled", .http(headers: [("Cache-Control", "max-age=600")], body: "SMUGGLED", then: .keepAlive))
        try origin.script("/victim-page", .http(headers: [("Cache-Control", "max-age=600")], body: "victim", then: .keepAlive))
        let session = try DriverTestSession()
        defer { session.cleanUp() }
        let smuggle = #"{"id":"p","method":"POST","url":"\#(origin.url("/form"))","headers":[["Content-Length","0"]],"body":"GET /smuggled HTTP/1.1\r\nHost: \#(origin.authority)\r\n\r\n"}"#
        let post = await session.session.answer(smuggle)
        guard case .error(let id, let message) = post else {
            Issue.record("the smuggling line was answered: \(post)")
            return
        }
        #expect(id == .string("p"))
        #expect(message.contains("Content-Length"))
        let host = await session.session.answer(#"{"id":"h","url":"\#(origin.url("/victim-page"))","headers":[["Host","evil.example"]]}"#)
        if case .response = host { Issue.record("a foreign Host was sent") }
        let victim = await session.session.answer(#"{"id":"v","url":"\#(origin.url("/victim-page"))"}"#)
        #expect(victim.jsonLine.contains("\"body\":\"victim\""), "\(victim.jsonLine)")
        #expect(try origin.requests().map(\.target) == ["/victim-page"])
    }

    @Test(arguments: ["HTTP/1.1 304 Not Modified\r\nCache-Control: max-age=600\r\n\r\n",
                      "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-4/9\r\nContent-Length: 5\r\n\r\nhello"])
    func unsolicitedNotModifiedOrPartialContentFailsGetAndTheDriver(raw: String) async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/u", HostileOrigin.Response(raw))
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", origin.url("/u").absoluteString])
        #expect(run.code == 1, "\(run.code) \(run.err)")
        #expect(run.out.isEmpty)
        #expect(run.err.contains("protocol error") && run.err.contains("unsolicited"), "\(run.err)")
        let session = try DriverTestSession()
        defer { session.cleanUp() }
        let answer = await session.session.answer(#"{"id":1,"url":"\#(origin.url("/u"))"}"#)
        guard case .error(_, let message) = answer else {
            Issue.record("the driver answered an unsolicited status: \(answer.jsonLine)")
            return
        }
        #expect(message.contains("unsolicited"))
    }

    /// Issue 10 item 17: a redirect target that cannot be reached is named in the message, and the requested
    /// URL's stored (stale) copy is not offered as if it could stand in for the target.
    @Test func aFailedRedirectTargetIsReportedUnderItsOwnURL() async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let hop = origin.url("/hop").absoluteString
        try origin.script("/hop", [.http(headers: [("Cache-Control", "max-age=0"), ("ETag", "\"v\"")], body: "old"),
                                   .http(status: 302, reason: "Found", headers: [("Location", "http://127.0.0.1:1/gone")])])
        #expect(await cli.run(["get", hop]).code == 0)
        let run = await cli.run(["get", hop])
        #expect(run.code == 7)
        #expect(run.err.contains("http://127.0.0.1:1/gone (redirect target of \(hop))"), "\(run.err)")
        #expect(!run.err.contains("stale copy"), "\(run.err)")
    }

    @Test func getWithAShortStallTimeoutFailsOnATrickledBody() async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/slow", .http(headers: [("Cache-Control", "max-age=600")],
                                         body: String(repeating: "x", count: 40), trickle: (nil, 1, 0.25)))
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", "--stall-timeout", "1", origin.url("/slow").absoluteString])
        #expect(run.code == 28)
        #expect(run.err.contains("timed out") && run.err.contains("stalled"), "\(run.err)")
        let list = await cli.run(["ls", "--json"])
        #expect(!list.out.contains("/slow"))
    }

    @Test func prefetchAndTheDriverTakeMaxTimeAndStallTimeout() async throws {
        let origin = try await HostileOrigin.start()
        defer { origin.stop() }
        try origin.script("/slow", .http(body: String(repeating: "x", count: 200_000), trickle: (nil, 4096, 0.2)))
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let prefetch = await cli.run(["prefetch", "--max-time", "1", "-"], stdin: origin.url("/slow").absoluteString + "\n")
        #expect(prefetch.code == 1)
        #expect(prefetch.err.contains("timed out"), "\(prefetch.err)")
        let limits = try FetchLimits.parse(ArgumentParser.parse(["--max-time", "1", "--stall-timeout", "2"],
                                                                  options: DriverCommand.options,
                                                                  positionals: DriverCommand.arguments))
        #expect(limits == FetchLimits(timeout: 1, stallRule: StallRule(minimumBytes: 1024, seconds: 2)))
        let session = try DriverTestSession(limits: limits)
        defer { session.cleanUp() }
        let answer = await session.session.answer(#"{"id":1,"url":"\#(origin.url("/slow"))"}"#)
        guard case .error(_, let message) = answer else {
            Issue.record("the driver ignored --max-time: \(answer.jsonLine)")
            return
        }
        #expect(message.contains("timed out"))
    }

    @Test(arguments: [["get", "--stall-timeout", "-1", "http://127.0.0.1:1/"],
                      ["get", "--stall-timeout", "x", "http://127.0.0.1:1/"],
                      ["prefetch", "--max-time", "0", "-"], ["driver", "--max-time", "abc"],
                      ["driver", "--stall-timeout", "1e3"]])
    func badLimitValuesAreUsageErrors(arguments: [String]) async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(arguments)
        #expect(run.code == 64, "\(arguments): \(run.err)")
    }

    @Test func stallTimeoutZeroSwitchesTheRuleOff() throws {
        let parsed = try ArgumentParser.parse(["--stall-timeout", "0", "http://x/"], options: GetCommand.options,
                                              positionals: GetCommand.arguments)
        #expect(try FetchLimits.parse(parsed).stallRule?.minimumBytes == 0)
    }
}

/// A driver session (in process) on a temp cache directory, for tests that talk to their own origin.
struct DriverTestSession {
    let directory: URL
    let session: DriverSession

    init(limits: FetchLimits = FetchLimits()) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-hostile-cli-\(UUID().uuidString)")
        var configuration = DownloadCache.Configuration(directory: directory)
        configuration.log = { _ in }
        var options = DriverSessionOptions()
        options.limits = limits
        session = DriverSession(cache: try DownloadCache(configuration: configuration), options: options, write: { _ in })
    }

    func cleanUp() { try? FileManager.default.removeItem(at: directory) }
}
