import Foundation
import Testing
import CacheCLI
import CacheTestSupport

/// `info -H 'Name: value'` shows the variant a request with those headers would get (RFC 9111 §4.1).
@Suite struct InfoVariantTests {
    @Test func headerPicksTheMatchingVariant() async throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/v", headers: [("Cache-Control", "max-age=600"), ("Vary", "Accept-Language")],
                                   body: "v", echoHeader: "Accept-Language")
        let url = origin.url("/v").absoluteString
        for language in ["de", "fr"] {
            #expect(await cli.run(["get", "-o", "/dev/null", "-H", "Accept-Language: \(language)", url]).code == 0)
        }
        let all = try #require(try await cli.run(["info", "--json", url]).json() as? [[String: Any]])
        #expect(all.count == 2)
        let picked = try #require(try await cli.run(["info", "--json", "-H", "Accept-Language: fr", url]).json() as? [[String: Any]])
        #expect(picked.count == 1)
        #expect((picked.first?["variant"] as? String)?.contains("fr") == true, "\(picked)")
        let none = await cli.run(["info", "-H", "Accept-Language: ja", url])
        #expect(none.code == 1)
        #expect(none.err.hasPrefix("Error: not cached: no stored variant of \(url) matches"))
        #expect(await cli.run(["info", "-H", "bad", url]).code == 64)
    }
}
