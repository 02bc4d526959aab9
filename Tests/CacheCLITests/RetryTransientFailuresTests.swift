import Foundation
import Testing
@testable import CacheCLI
import CacheTestSupport

/// `get --retry N` tries again after a timeout, a failed connection or a 408/429/500/502/503/504, as curl does;
/// only the last answer's body is written; other statuses and failures are not retried.
@Suite struct RetryTransientFailuresTests {
    @Test(arguments: [[String](), ["-i"]])
    func aServiceUnavailableIsTriedAgainAndOnlyTheLastBodyIsWritten(_ extra: [String]) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/busy", status: 503, headers: [("Retry-After", "0")], body: "busy\n")
        let run = await cli.run(["get", "--retry", "2"] + extra + [origin.url("/busy").absoluteString])
        #expect(run.code == 0, "\(run.err)")
        #expect(run.out.hasSuffix("busy\n") && run.out.components(separatedBy: "busy").count == 2, "\(run.out)")
        #expect(run.err.components(separatedBy: "trying again").count == 3, "\(run.err)")
        #expect(run.err.contains("Warning: HTTP 503"))
        #expect(run.err.contains("(1 retry left)"))
        #expect(try await origin.hits("/busy").total == 3)
    }

    @Test func withFailTheLastTryExitsTwentyTwo() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/busy", status: 503, headers: [("Retry-After", "0")], body: "busy")
        let run = await cli.run(["get", "-f", "--retry", "1", origin.url("/busy").absoluteString])
        #expect(run.code == 22)
        #expect(try await origin.hits("/busy").total == 2)
    }

    @Test(arguments: [404, 403, 501])
    func otherStatusesAreNotRetried(_ status: Int) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/no", status: status, body: "no")
        let run = await cli.run(["get", "--retry", "3", "--retry-delay", "0.01", origin.url("/no").absoluteString])
        #expect(run.code == 0 && run.out == "no")
        #expect(!run.err.contains("trying again"))
        #expect(try await origin.hits("/no").total == 1)
    }

    @Test func withoutRetryAServiceUnavailableIsAskedOnce() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/busy", status: 503, body: "busy")
        let run = await cli.run(["get", origin.url("/busy").absoluteString])
        #expect(run.code == 0 && run.out == "busy")
        #expect(try await origin.hits("/busy").total == 1)
    }

    /// The second try resumes the partial the first one kept (a Range request), as a fresh run would.
    @Test func aTimeoutIsTriedAgain() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        // Counted as it starts; every answer (the first, and the 206 resuming it) sends 500,000 bytes, then the
        // origin holds the rest: each try times out during the body.
        try await origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], size: 2_000_000,
                                   etag: "\"v1\"", holdAfter: 500_000)
        let output = cli.directory.appendingPathComponent("slow.bin")
        let run = await cli.run(["get", "--max-time", "0.3", "--retry", "1", "--retry-delay", "0.01",
                                 "-o", output.path, origin.url("/slow").absoluteString])
        #expect(run.code == 28, "\(run.err)")
        #expect(run.err.components(separatedBy: "trying again").count == 2, "\(run.err)")
        let hits = try await origin.hits("/slow")
        #expect(hits.total == 2)
        #expect(hits.ranged == 1)
    }

    /// Bytes already on stdout cannot be taken back: the failure is reported, not tried again.
    @Test func aTimeoutAfterBytesWentToStandardOutputIsNotTriedAgain() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        // 500,000 bytes, then held: the 1 s limit comes after bytes went out and before the body's end.
        try await origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], size: 2_000_000,
                                   etag: "\"v1\"", holdAfter: 500_000)
        let run = await cli.run(["get", "--max-time", "1", "--retry", "1", "--retry-delay", "0.01",
                                 origin.url("/slow").absoluteString])
        #expect(run.code == 28)
        #expect(run.err.contains("not tried again"), "\(run.err)")
        #expect(try await origin.hits("/slow").total == 1)
    }

    @Test func aRefusedConnectionIsTriedAgainThenExitsSeven() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", "--retry", "2", "--retry-delay", "0.01", "--no-read", "http://127.0.0.1:9/x"])
        #expect(run.code == 7)
        #expect(run.err.components(separatedBy: "trying again").count == 3, "\(run.err)")
        #expect(run.err.hasSuffix("\n") && run.err.contains("Error: network error: cannot connect"))
    }

    @Test func theWaitDoublesIsFixedByRetryDelayAndFollowsRetryAfterUpToTheCap() {
        let now = Date(timeIntervalSince1970: 1_767_225_600)
        let doubling = RetryRule(count: 9)
        #expect((1...8).map { doubling.delay(attempt: $0, retryAfter: nil, now: now) } == [1, 2, 4, 8, 16, 32, 60, 60])
        #expect(doubling.delay(attempt: 1, retryAfter: "7", now: now) == 7)
        #expect(doubling.delay(attempt: 1, retryAfter: "86400", now: now) == RetryRule.maximumDelay)
        #expect(doubling.delay(attempt: 1, retryAfter: "Thu, 01 Jan 2026 00:00:05 GMT", now: now) == 5)
        #expect(doubling.delay(attempt: 1, retryAfter: "Thu, 01 Jan 2025 00:00:05 GMT", now: now) == 0)
        #expect(doubling.delay(attempt: 3, retryAfter: "soon", now: now) == 4)
        let fixed = RetryRule(count: 3, fixedDelay: 0.5)
        #expect(fixed.delay(attempt: 3, retryAfter: nil, now: now) == 0.5)
        #expect(fixed.delay(attempt: 3, retryAfter: "2", now: now) == 2)
    }

    @Test(arguments: [["--retry", "-1"], ["--retry", "x"], ["--retry-delay", "-2"], ["--retry-delay", "61"]])
    func badRetryValuesAreUsageErrors(_ args: [String]) async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get"] + args + ["http://127.0.0.1:9/x"])
        #expect(run.code == 64, "\(run.err)")
    }
}
