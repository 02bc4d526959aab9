import Foundation
import Testing
import CacheCLI
import CacheTestSupport

/// Redirects: every hop shown by `-v` with its status, Location and HIT/MISS, `--max-redirs`, `--no-follow`.
@Suite struct RedirectDisplayTests {
    @Test func verboseShowsEveryHopAndTheFinalURL() async throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/a", status: 301, headers: [("Cache-Control", "max-age=600")], body: "",
                                   redirect: "/b")
        try await origin.configure(path: "/b", status: 302, body: "", redirect: "/c")
        try await origin.configure(path: "/c", headers: [("Cache-Control", "max-age=600")], body: "end")
        let a = origin.url("/a").absoluteString, b = origin.url("/b").absoluteString, c = origin.url("/c").absoluteString
        let first = await cli.run(["get", "-v", a])
        #expect(first.code == 0, "\(first.err)")
        #expect(first.out == "end")
        let lines = first.err.split(separator: "\n").map(String.init)
        #expect(lines.count >= 4, "\(first.err)")
        #expect(lines.first == "MISS 301 \(a) -> Location: \(b)")
        #expect(lines.dropFirst().first == "MISS 302 \(b) -> Location: \(c)")
        #expect(lines.contains("final URL: \(c)"))
        let second = await cli.run(["get", "-v", a])
        let again = second.err.split(separator: "\n").map(String.init)
        // The 301 is stored (max-age=600): a hit; the 302 has no lifetime: asked again.
        #expect(again.first == "HIT 301 \(a) -> Location: \(b)", "\(second.err)")
        #expect(again.dropFirst().first == "MISS 302 \(b) -> Location: \(c)")
        #expect(again.dropFirst(3).first?.hasPrefix("HIT ") == true, "\(second.err)")
    }

    @Test func jsonListsEveryHop() async throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/a", status: 301, headers: [("Cache-Control", "max-age=600")], body: "",
                                   redirect: "/b")
        try await origin.configure(path: "/b", headers: [("Cache-Control", "max-age=600")], body: "end")
        let a = origin.url("/a").absoluteString, b = origin.url("/b").absoluteString
        let first = try await cli.run(["get", "--json", a]).object()
        #expect(first["url"] as? String == b)
        let hops = try #require(first["redirects"] as? [[String: Any]])
        #expect(hops.count == 1)
        #expect(hops.first?["url"] as? String == a && hops.first?["location"] as? String == b)
        #expect(hops.first?["status"] as? Int == 301 && hops.first?["source"] as? String == "network")
        let second = try await cli.run(["get", "--json", a]).object()
        #expect((second["redirects"] as? [[String: Any]])?.first?["source"] as? String == "cache")
        let direct = try await cli.run(["get", "--json", b]).object()
        #expect((direct["redirects"] as? [[String: Any]])?.isEmpty == true)
        #expect(try await origin.hits("/a").total == 1)
    }

    @Test func noFollowReturnsTheRedirectItself() async throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/r", status: 302, body: "moved", redirect: "/t")
        try await origin.configure(path: "/t", body: "target")
        let run = await cli.run(["get", "--no-follow", "-i", "--no-store", origin.url("/r").absoluteString])
        #expect(run.code == 0)
        #expect(run.out.hasPrefix("HTTP/1.1 302 Found\r\n"))
        #expect(run.out.contains("Location: /t\r\n"))
        #expect(run.out.hasSuffix("moved"))
        #expect(try await origin.hits("/t").total == 0)
    }

    @Test func maxRedirsBoundsTheChainWithOneNumber() async throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        for i in 0..<3 {
            try await origin.configure(path: "/h\(i)", status: 302, body: "", redirect: "/h\(i + 1)")
        }
        try await origin.configure(path: "/h3", body: "done")
        let url = origin.url("/h0").absoluteString
        let tooFew = await cli.run(["get", "--max-redirs", "2", url])
        #expect(tooFew.code == 47)
        #expect(tooFew.err.contains("more than 2 redirects followed"), "\(tooFew.err)")
        #expect(try await origin.hits("/h3").total == 0)
        // One number, one mention of the URL, and the singular for one.
        let one = await cli.run(["get", "--max-redirs", "1", url])
        #expect(one.code == 47)
        #expect(one.err.contains("(more than 1 redirect followed)"), "\(one.err)")
        #expect(one.err.components(separatedBy: url).count == 2, "\(one.err)")
        let enough = await cli.run(["get", "--max-redirs", "3", url])
        #expect(enough.code == 0)
        #expect(enough.out == "done")
        #expect(await cli.run(["get", "--max-redirs", "-1", url]).code == 64)
        #expect(await cli.run(["get", "-L", url]).code == 0)
    }
}
