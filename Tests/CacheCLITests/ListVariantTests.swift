import Foundation
import Testing
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
@testable import CacheCLI

/// `ls` tells Vary variants apart (a VARIANT column, a `variant` member in `--json`); without variants the
/// columns stay as they are.
@Suite(.serialized) struct ListVariantTests {
    @Test func lsTellsVaryVariantsApart() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/v", headers: [("Cache-Control", "max-age=600"), ("Vary", "Accept-Language")],
                                   body: "hello")
        try await origin.configure(path: "/plain", headers: [("Cache-Control", "max-age=600")], body: "plain")
        let url = origin.url("/v").absoluteString
        for language in ["fr", "de"] {
            #expect(await cli.run(["get", "-H", "Accept-Language: \(language)", url]).code == 0)
        }
        #expect(await cli.run(["get", origin.url("/plain").absoluteString]).code == 0)

        let text = await cli.run(["ls"])
        let lines = text.out.split(separator: "\n").map(String.init)
        #expect(lines.first?.contains("VARIANT") == true)
        #expect(lines.contains { $0.contains("accept-language:fr") && $0.hasSuffix(url) })
        #expect(lines.contains { $0.contains("accept-language:de") && $0.hasSuffix(url) })
        #expect(lines.contains { $0.hasSuffix(origin.url("/plain").absoluteString) && $0.contains(" - ") })

        let entries = try #require(try await cli.run(["ls", "--json"]).json() as? [[String: Any]])
        #expect(entries.count == 3)
        for entry in entries {
            for key in ["url", "status", "bytes", "age", "fresh", "pinned", "storage", "namespace", "variant"] {
                #expect(entry[key] != nil, "\(key) missing")
            }
        }
        let variants = Set(entries.filter { $0["url"] as? String == url }.compactMap { $0["variant"] as? String })
        #expect(variants == ["accept-language:fr", "accept-language:de"])
        #expect(entries.first { $0["url"] as? String == origin.url("/plain").absoluteString }?["variant"] as? String == "")
    }

    @Test func lsWithoutVariantsKeepsTheOldColumns() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        #expect(await cli.run(["get", origin.url("/size/10").absoluteString]).code == 0)
        let header = await cli.run(["ls"]).out.split(separator: "\n").first.map(String.init)
        #expect(header?.hasPrefix("STATUS") == true)
        #expect(header?.contains("VARIANT") == false)
    }
}
