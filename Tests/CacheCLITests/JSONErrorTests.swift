import Foundation
import Testing
import CacheCLI
import CacheTestSupport

/// A `--json` run that fails prints one `{"error": {...}}` object on stdout and still exits non-zero.
@Suite struct JSONErrorTests {
    @Test func networkFailurePrintsOneErrorObject() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", "--json", "http://127.0.0.1:9/x"])
        #expect(run.code == 7)
        #expect(run.out.hasSuffix("\n") && run.out.filter { $0 == "\n" }.count == 1)
        let error = try #require(try run.object()["error"] as? [String: Any])
        #expect(Set(error.keys) == ["kind", "message", "url", "exitCode"])
        #expect(error["kind"] as? String == "connect")
        #expect(error["exitCode"] as? Int == 7)
        #expect(error["url"] as? String == "http://127.0.0.1:9/x")
        #expect((error["message"] as? String)?.hasPrefix("network error: cannot connect") == true)
        #expect(run.err.hasPrefix("Error: network error"))
    }

    @Test func failFlagWithJSONReportsHTTPKind() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/gone", status: 404, body: "nope")
        let run = await cli.run(["get", "--json", "-f", "--no-store", origin.url("/gone").absoluteString])
        #expect(run.code == 22)
        // One object: the error (the response is described by its message).
        let object = try run.object()
        let error = try #require(object["error"] as? [String: Any])
        #expect(error["kind"] as? String == "http")
        #expect(error["exitCode"] as? Int == 22)
    }

    @Test func usageErrorWithJSONPrintsUsageKind() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", "--json", "--expires-in", "soon", "http://127.0.0.1:9/"])
        #expect(run.code == 64)
        let error = try #require(try run.object()["error"] as? [String: Any])
        #expect(error["kind"] as? String == "usage")
        #expect(error["exitCode"] as? Int == 64)
        #expect(error["url"] is NSNull)
    }

    @Test func notCachedWithJSONExitsOne() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", "--json", "--policy", "dont-load", "http://127.0.0.1:9/none"])
        #expect(run.code == 1)
        let error = try #require(try run.object()["error"] as? [String: Any])
        #expect(error["kind"] as? String == "not-cached")
    }
}
