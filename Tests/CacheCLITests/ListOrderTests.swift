import Foundation
import Testing
import CacheCLI
import CacheTestSupport

/// `ls` lists entries sorted by URL, then variant, so identical runs print identical lists.
@Suite struct ListOrderTests {
    @Test func entriesAreSortedByURLThenVariant() async throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/v", headers: [("Cache-Control", "max-age=600"), ("Vary", "Accept-Language")],
                                   body: "v", echoHeader: "Accept-Language")
        for path in ["/size/3", "/size/1", "/size/2"] {
            #expect(await cli.run(["get", "-o", "/dev/null", origin.url(path).absoluteString]).code == 0)
        }
        for language in ["fr", "de", "en"] {
            #expect(await cli.run(["get", "-o", "/dev/null", "-H", "Accept-Language: \(language)",
                                   origin.url("/v").absoluteString]).code == 0)
        }
        let entries = try #require(try await cli.run(["ls", "--json"]).json() as? [[String: Any]])
        let keys = entries.map { "\($0["url"] as? String ?? "") \($0["variant"] as? String ?? "")" }
        #expect(keys == keys.sorted(), "\(keys)")
        #expect(entries.count == 6)
        // The text listing is in the same order (its AGE column may tick between two runs, so only URLs compare).
        let text = await cli.run(["ls"])
        let listed = text.out.split(separator: "\n").compactMap { line in
            line.split(separator: " ").last.flatMap { $0.hasPrefix("http") ? String($0) : nil }
        }
        #expect(listed == entries.map { $0["url"] as? String ?? "" }, "\(text.out)")
    }
}
