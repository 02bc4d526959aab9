import Foundation
import Testing
import CacheCLI
import CacheTestSupport

/// `rm --prefix URL` removes every stored URL under a prefix; `--dry-run` only lists them.
@Suite struct RemovePrefixTests {
    @Test func prefixRemovesOnlyTheURLsUnderItAndDryRunRemovesNothing() async throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        for path in ["/size/1", "/size/2", "/size/30"] {
            #expect(await cli.run(["get", "-o", "/dev/null", origin.url(path).absoluteString]).code == 0)
        }
        try await origin.configure(path: "/other", headers: [("Cache-Control", "max-age=600")], body: "keep")
        #expect(await cli.run(["get", "-o", "/dev/null", origin.url("/other").absoluteString]).code == 0)
        let prefix = origin.url("/size/").absoluteString
        let dry = await cli.run(["rm", "--prefix", prefix, "--dry-run"])
        #expect(dry.code == 0)
        #expect(dry.out.hasSuffix("would remove 3 entries (3 URLs) under \(prefix)\n"), "\(dry.out)")
        #expect(try #require(try await cli.run(["ls", "--json"]).json() as? [Any]).count == 4)
        let json = try await cli.run(["rm", "--prefix", origin.url("/size/3").absoluteString, "--json"]).object()
        #expect(json["removed"] as? Int == 1)
        let real = await cli.run(["rm", "--prefix", prefix])
        #expect(real.code == 0)
        #expect(real.out.contains("removed \(origin.url("/size/1").absoluteString)\n"))
        let left = try #require(try await cli.run(["ls", "--json"]).json() as? [[String: Any]])
        #expect(left.map { $0["url"] as? String } == [origin.url("/other").absoluteString])
        #expect(await cli.run(["rm", "--prefix", prefix]).code == 1)
        #expect(await cli.run(["rm", "--prefix", prefix, origin.url("/other").absoluteString]).code == 64)
        #expect(await cli.run(["rm"]).code == 64)
    }
}
