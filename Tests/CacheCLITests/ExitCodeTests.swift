import Foundation
import Testing
import CacheCLI
import CacheTestSupport

/// `get` exits with curl's number for the failures curl has, so scripts written for curl keep working.
@Suite struct ExitCodeTests {
    @Test func refusedConnectionExitsSeven() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", "--no-read", "http://127.0.0.1:9/x"])
        #expect(run.code == 7, "\(run.code) \(run.err)")
        #expect(run.err.hasPrefix("Error: network error: cannot connect"))
    }

    @Test func unresolvableHostExitsSix() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        // RFC 6761 §6.4: names under .invalid never resolve.
        let run = await cli.run(["get", "http://no-such-host.invalid/x"])
        #expect(run.code == 6, "\(run.code) \(run.err)")
        #expect(run.err.hasPrefix("Error: network error: cannot resolve the origin's host name"))
    }

    @Test func timeoutExitsTwentyEight() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/slow", body: "late", delay: 5)
        let run = await cli.run(["get", "--max-time", "1", origin.url("/slow").absoluteString])
        #expect(run.code == 28, "\(run.code) \(run.err)")
        #expect(run.err.contains("timed out"))
    }

    @Test func redirectLoopExitsFortySeven() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/loop", status: 302, body: "", redirect: "/loop")
        let run = await cli.run(["get", origin.url("/loop").absoluteString])
        #expect(run.code == 47, "\(run.code) \(run.err)")
        #expect(run.err.contains("too many redirects"))
    }

    /// Without `-f` an HTTP error status is a response like any other (exit 0, body printed); with `-f` it is exit
    /// 22 with nothing on stdout, as curl does.
    @Test func failOnHTTPErrorExitsTwentyTwoAndWithoutFailZero() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/gone", status: 404, body: "nope")
        let url = origin.url("/gone").absoluteString
        let plain = await cli.run(["get", url])
        #expect(plain.code == 0)
        #expect(plain.out == "nope")
        let failing = await cli.run(["get", "-f", "--no-store", url])
        #expect(failing.code == 22)
        #expect(failing.out.isEmpty)
        #expect(failing.err.hasPrefix("Error: HTTP 404 "))
    }

    @Test func unwritableOutputExitsTwentyThree() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let url = origin.url("/size/100").absoluteString
        let missingDirectory = await cli.run(["get", "-o", cli.directory.path + "/no/such/dir/file", url])
        #expect(missingDirectory.code == 23, "\(missingDirectory.code) \(missingDirectory.err)")
        #expect(missingDirectory.err.hasPrefix("Error: cannot write "))
        if FileManager.default.fileExists(atPath: "/dev/full") {
            let full = await cli.run(["get", "-o", "/dev/full", url])
            #expect(full.code == 23, "\(full.code) \(full.err)")
        }
    }

    @Test func usageErrorsStaySixtyFour() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        #expect(await cli.run(["get", "--no-such-option", "http://127.0.0.1:9/"]).code == 64)
        #expect(await cli.run(["get", "-X", "BAD METHOD", "http://127.0.0.1:9/"]).code == 64)
    }

    @Test func everyKindHasItsDocumentedCode() {
        let expected: [FailureKind: Int32] = [.dns: 6, .connect: 7, .truncated: 18, .http: 22, .write: 23,
                                              .timeout: 28, .tls: 35, .tooManyRedirects: 47,
                                              .tlsCertificate: 60, .tooLarge: 63, .usage: 64, .failed: 1, .notCached: 1]
        for (kind, code) in expected { #expect(kind.exitCode == code, "\(kind)") }
    }

    @Test func helpDocumentsTheExitCodes() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let help = await cli.run(["get", "--help"])
        for fragment in ["6 host name not resolved", "7 cannot connect", "22 HTTP status >= 400", "23 cannot write",
                         "28 timed out", "35 TLS handshake", "47 too many", "60 certificate not trusted", "63 body over the transfer limit", "64 bad usage"] {
            #expect(help.out.replacingOccurrences(of: "\n", with: " ").contains(fragment), "\(fragment)")
        }
    }
}
