import Foundation
import Testing
@testable import CacheCLI
import CacheTestSupport

/// `-w/--write-out FORMAT` prints curl's common variables and the cache's `%{cache_status}` on stdout after the
/// body, also after a failure (`000`, the exit code).
@Suite struct WriteOutTests {
    @Test func theCommonVariablesAfterTheBody() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let clock = FixedClock()
        let cli = try CLIHarness(now: clock.now)
        defer { cli.cleanUp() }
        try await origin.configure(path: "/page", headers: [("Cache-Control", "max-age=600"), ("Content-Type", "text/plain")],
                                   body: "hello")
        let url = origin.url("/page").absoluteString
        let format = "%{http_code} %{size_download} %{time_total} %{content_type} %{cache_status} %{num_redirects} %{exitcode}\\n"
        let miss = await cli.run(["get", "-w", format, url])
        #expect(miss.code == 0)
        #expect(miss.out == "hello200 5 0.000000 text/plain MISS 0 0\n")
        let hit = await cli.run(["get", "-s", "-o", "/dev/null", "--write-out", format, url])
        #expect(hit.out == "200 5 0.000000 text/plain HIT 0 0\n")
        let buffered = await cli.run(["get", "-i", "-o", "/dev/null", "-w", "%{url_effective}|%{cache_status}", url])
        #expect(buffered.out == url + "|HIT")
        #expect(try await origin.hits("/page").total == 1)
    }

    @Test func theEffectiveURLAfterARedirect() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/old", status: 301, redirect: origin.url("/new").absoluteString)
        try await origin.configure(path: "/new", body: "new")
        let run = await cli.run(["get", "-o", "/dev/null", "-w", "%{url_effective} %{num_redirects} %{http_code}",
                                 origin.url("/old").absoluteString])
        #expect(run.out == origin.url("/new").absoluteString + " 1 200")
    }

    @Test func afterAFailureTheCodeIsZerosAndTheExitCodeIsKnown() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", "-s", "--no-read", "-w", "%{http_code} %{exitcode} %{cache_status}.", "http://127.0.0.1:9/x"])
        #expect(run.code == 7)
        #expect(run.out == "000 7 .")
        let message = await cli.run(["get", "-s", "--no-read", "-w", "%{errormsg}", "http://127.0.0.1:9/x"])
        #expect(message.out.hasPrefix("network error: cannot connect"))
    }

    @Test func escapesAndUnknownVariables() async throws {
        let values = WriteOut.Values(url: "http://h/x")
        #expect(WriteOut.render("a\\tb\\\\c%%d\\re\\q", values).text == "a\tb\\c%d\re\\q")
        let unknown = WriteOut.render("[%{nope}] %{http_code", values)
        #expect(unknown.text == "[] %{http_code")
        #expect(unknown.unknown == ["nope"])
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", "--no-read", "-w", "%{nope}", "http://127.0.0.1:9/x"])
        #expect(run.err.contains("Warning: unknown --write-out variable 'nope'"))
    }
}
