import Foundation
import Testing
import CacheTestSupport
@testable import CacheCLI

/// End-to-end `dlcache get` runs against the loopback origin (Tests/Fixtures/origin.py).
@Suite(.serialized) struct GetCommandTests {
    /// A clock stopped on the last whole second (the origin's `Date` has whole seconds: its response is 0 s old
    /// when received), so ages are exact.
    static func wholeSecondClock() -> FixedClock {
        FixedClock(Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
    }

    @Test func secondGetIsAHitWithoutAnOriginRequest() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let clock = Self.wholeSecondClock()
        let cli = try CLIHarness(now: clock.now)
        defer { cli.cleanUp() }
        try await origin.configure(path: "/a", headers: [("Cache-Control", "max-age=60")], body: "hello")
        let url = origin.url("/a").absoluteString

        let first = await cli.run(["get", "-v", url])
        #expect(first.code == 0)
        #expect(first.out == "hello")
        #expect(first.err.hasPrefix("MISS "))
        clock.advance(by: 7)
        let second = await cli.run(["get", "-v", url])
        #expect(second.code == 0)
        #expect(second.out == "hello")
        // `HIT fresh age=<whole seconds>s 5 bytes status=200; <reason>`.
        #expect(second.err.hasPrefix("HIT fresh age=7s 5 bytes status=200; "))
        #expect(second.err.contains("max-age=60"))
        // The summary line, then this cache's Cache-Status member (RFC 9211).
        let lines = second.err.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.last?.hasPrefix("Cache-Status: dlcache; hit; ttl=") == true)
        #expect(try await origin.hits("/a").total == 1)
    }

    @Test func jsonObjectHasTheContractFieldsAndBodyGoesToFile() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let clock = Self.wholeSecondClock()
        let cli = try CLIHarness(now: clock.now)
        defer { cli.cleanUp() }
        try await origin.configure(path: "/j", headers: [("Cache-Control", "max-age=60")], body: "json body")
        let url = origin.url("/j").absoluteString
        let run = await cli.run(["get", "--json", "-o", "body.txt", url])
        #expect(run.code == 0)
        let object = try run.object()
        for key in ["url", "status", "source", "bytes", "path", "age", "fresh", "reason", "headers"] {
            #expect(object[key] != nil, "missing \(key)")
        }
        #expect(object["url"] as? String == url)
        #expect(object["status"] as? Int == 200)
        #expect(object["source"] as? String == "network")
        #expect(object["bytes"] as? Int == 9)
        #expect(object["fresh"] as? Bool == true)
        let headers = try #require(object["headers"] as? [[String]])
        #expect(headers.contains(["Cache-Control", "max-age=60"]))
        #expect(headers.allSatisfy { $0.count == 2 })
        #expect(try String(contentsOf: cli.directory.appendingPathComponent("body.txt"), encoding: .utf8) == "json body")

        #expect(object["age"] as? Int == 0)
        clock.advance(by: 7)
        let again = try await cli.run(["get", "--json", url]).object()
        #expect(again["source"] as? String == "cache")
        #expect(again["age"] as? Int == 7)
    }

    @Test func largeBodyIsStreamedFromItsStoredFile() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let url = origin.url("/size/300000").absoluteString
        let r1 = await cli.run(["get", "-o", "first.bin", url])
        #expect(r1.code == 0)
        let run = await cli.run(["get", "--json", "-o", "second.bin", url])
        let object = try run.object()
        #expect(object["source"] as? String == "cache")
        let path = try #require(object["path"] as? String)
        #expect(FileManager.default.fileExists(atPath: path))
        let data = try Data(contentsOf: cli.directory.appendingPathComponent("second.bin"))
        #expect(data.count == 300_000)
        #expect(data.enumerated().allSatisfy { $0.element == UInt8($0.offset % 256) })
    }

    @Test func dontLoadWithNothingCachedFailsWithoutNetwork() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", "--policy", "dont-load", origin.url("/size/10").absoluteString])
        #expect(run.code == 1)
        #expect(run.err.hasPrefix("Error: not cached: "))
        #expect(run.out.isEmpty)
        #expect(try await origin.hits("/size/10").total == 0)
    }

    @Test func unreachableOriginIsANetworkErrorAndFallbackServesStale() async throws {
        let origin = try await OriginServer.start()
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/s", headers: [("Cache-Control", "max-age=0")], body: "old", etag: "\"v1\"")
        let url = origin.url("/s").absoluteString
        let r2 = await cli.run(["get", url])
        #expect(r2.code == 0)
        origin.stop()

        let byDefault = await cli.run(["get", "--json", url])  // RFC 9111 §4.2.4: served stale while disconnected
        #expect(byDefault.code == 0)
        #expect(try byDefault.object()["source"] as? String == "stale")
        let plain = await cli.run(["get", "--no-stale-when-disconnected", url])
        #expect(plain.code == 7)
        #expect(plain.err.hasPrefix("Error: network error: cannot connect"))
        let fallback = await cli.run(["get", "--fallback-to-cache", "--json", url])
        #expect(fallback.code == 0)
        #expect(try fallback.object()["source"] as? String == "stale")
        let missing = await cli.run(["get", origin.url("/never").absoluteString])
        #expect(missing.code == 7)
        #expect(missing.err.contains("nothing usable is cached"))
    }

    @Test func expiresInOverridesAMissingLifetime() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/plain", body: "no freshness info")
        let url = origin.url("/plain").absoluteString
        let r3 = await cli.run(["get", "--expires-in", "60", url])
        #expect(r3.code == 0)
        let second = await cli.run(["get", "--json", url])
        #expect(try second.object()["source"] as? String == "cache")
        #expect(try await origin.hits("/plain").total == 1)
    }

    @Test func reloadRevalidatingSendsAConditionalRequest() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/v", headers: [("Cache-Control", "max-age=600")], body: "v1", etag: "\"e1\"")
        let url = origin.url("/v").absoluteString
        let r4 = await cli.run(["get", url])
        #expect(r4.code == 0)
        let revalidated = await cli.run(["get", "--policy", "reload-revalidating", "--json", url])
        #expect(try revalidated.object()["source"] as? String == "revalidated")
        let reload = await cli.run(["get", "--policy", "reload", "--json", url])
        #expect(try reload.object()["source"] as? String == "network")
        let hits = try await origin.hits("/v")
        #expect(hits.total == 3)
        #expect(hits.notModified == 1)
    }

    @Test func headersAndMethodReachTheOrigin() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/echo", headers: [("Cache-Control", "max-age=60")], echoHeader: "X-Test")
        let url = origin.url("/echo").absoluteString
        let run = await cli.run(["get", "-H", "X-Test: hello", "-X", "HEAD", "--json", url])
        #expect(run.code == 0)
        #expect(try await origin.hits("/echo").methods["HEAD"] == 1)
    }

    @Test("bad get command lines exit 64 naming the value", arguments: [
        (["get", "ftp://x/"], "Error: invalid URL 'ftp://x/': expected an absolute http:// or https:// URL (see 'dlcache get --help')"),
        (["get", "--policy", "sometimes", "http://x/"], "Error: invalid value 'sometimes' for '--policy': expected one of use-protocol, reload, return-cache-else-load, return-cache-dont-load, reload-revalidating, ask-server-if-modified-when-stale, ask-server-if-modified, only-load-if-not-cached, dont-load (see 'dlcache get --help')"),
        (["get", "-H", "NoColon", "http://x/"], "Error: invalid value 'NoColon' for '-H': expected 'Name: value' (see 'dlcache get --help')"),
        (["get", "--max-time", "soon", "http://x/"], "Error: invalid value 'soon' for '--max-time': expected a number of seconds > 0 and <= 86400 (1 day) (see 'dlcache get --help')"),
        (["get", "--sliding", "http://x/"], "Error: '--sliding' needs '--expires-in <seconds>' (see 'dlcache get --help')"),
        (["get", "-X", "GE T", "http://x/"], "Error: invalid value 'GE T' for '-X': not an HTTP method token (see 'dlcache get --help')"),
        (["get", "--namespace", "../x", "http://x/"], "Error: invalid value '../x' for '--namespace': use 1-64 characters of A-Z a-z 0-9 . _ - (see 'dlcache get --help')"),
    ])
    func usageErrors(_ args: [String], _ message: String) async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(args)
        #expect(run.code == 64)
        #expect(run.err == message + "\n")
        #expect(run.out.isEmpty)
    }
}
