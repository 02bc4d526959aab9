import Foundation
import Testing
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
@testable import CacheCLI

/// Command output: decimal-only numbers, singular counts, the stale-copy hint, lifetime
/// statistics labels, and Vary variants in `ls`.
@Suite(.serialized) struct InspectionOutputTests {
    @Test("numeric options accept plain decimal numbers only", arguments: [
        "0x10", "inf", "nan", "1e3", "+5", "-0", ".5", "5.", "1.2.3", " 5", "５", "",
    ])
    func nonDecimalSecondsAreRejected(_ text: String) async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        for option in ["--expires-in", "--max-time"] {
            let run = await cli.run(["get", option, text, "http://127.0.0.1:1/x"])
            #expect(run.code == 64, "\(option) \(text)")
            #expect(run.err.hasPrefix("Error: invalid value '\(text)' for '\(option)'"), "\(run.err)")
        }
        let prefetch = await cli.run(["prefetch", "--concurrency", text, "-"], stdin: "")
        #expect(prefetch.code == 64)
        #expect(prefetch.err.hasPrefix("Error: invalid value '\(text)' for '--concurrency'"))
    }

    @Test func decimalNumbersStillWork() throws {
        let parsed = ParsedArguments(flags: [], values: ["expires-in": ["60"], "max-time": ["1.5"]], positionals: [])
        let options = try GetCommand.requestOptions(parsed)
        #expect(options.expiration == .seconds(60))
        #expect(options.timeout == 1.5)
        #expect(ParsedArguments.isDecimal("007", fraction: false))
        #expect(!ParsedArguments.isDecimal("0.5", fraction: false))
        #expect(ParsedArguments.isDecimal("0.5", fraction: true))
    }

    @Test func verifyCountsOneEntryInTheSingular() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        #expect(await cli.run(["get", origin.url("/size/10").absoluteString]).code == 0)
        let run = await cli.run(["verify"])
        #expect(run.code == 0)
        #expect(run.out == "checked 1 entry: ok\n")
    }

    @Test func unreachableOriginWithAStoredCopyMentionsFallbackToCache() async throws {
        let origin = try await OriginServer.start()
        let cli = try CLIHarness()
        defer { origin.stop(); cli.cleanUp() }
        try await origin.configure(path: "/stale", headers: [("Cache-Control", "max-age=0")], body: "old")
        let stale = origin.url("/stale").absoluteString
        let other = origin.url("/never").absoluteString
        #expect(await cli.run(["get", stale]).code == 0)
        origin.stop()

        let hinted = await cli.run(["get", "--no-stale-when-disconnected", stale])
        #expect(hinted.code == 7)
        #expect(hinted.err.hasPrefix("Error: network error: cannot connect to the origin for \(stale)"))
        #expect(hinted.err.hasSuffix(" (a stale copy is stored: --fallback-to-cache serves it)\n"))
        let plain = await cli.run(["get", other])
        #expect(plain.code == 7)
        #expect(!plain.err.contains("--fallback-to-cache"))
        let served = await cli.run(["get", "--fallback-to-cache", stale])
        #expect(served.code == 0)
        #expect(served.out == "old")
    }

    @Test func unreachableOriginWithAMustRevalidateCopyDoesNotOfferFallbackToCache() async throws {
        let origin = try await OriginServer.start()
        let cli = try CLIHarness()
        defer { origin.stop(); cli.cleanUp() }
        try await origin.configure(path: "/strict", headers: [("Cache-Control", "max-age=0, must-revalidate")], body: "old")
        try await origin.configure(path: "/revalidated", headers: [("Cache-Control", "no-cache")], body: "old")
        let strict = origin.url("/strict").absoluteString
        let revalidated = origin.url("/revalidated").absoluteString
        #expect(await cli.run(["get", strict]).code == 0)
        #expect(await cli.run(["get", revalidated]).code == 0)
        origin.stop()

        for url in [strict, revalidated] {
            let refused = await cli.run(["get", url])
            #expect(refused.code == 7)
            #expect(refused.err.hasPrefix("Error: network error: cannot connect to the origin for \(url)"))
            #expect(!refused.err.contains("--fallback-to-cache"), "\(refused.err)")
            let fallback = await cli.run(["get", "--fallback-to-cache", url])
            #expect(fallback.code == 7)
            #expect(fallback.out.isEmpty)
        }
    }

    @Test func statsLabelsHitsAndMissesAsLifetimeTotals() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/a", headers: [("Cache-Control", "max-age=600")], body: "a")
        try await origin.configure(path: "/b", headers: [("Cache-Control", "max-age=600")], body: "b")
        for path in ["/a", "/a", "/b", "/b", "/a"] {
            #expect(await cli.run(["get", origin.url(path).absoluteString]).code == 0)
        }
        let object = try await cli.run(["stats", "--json"]).object()
        for key in ["entries", "bytes", "memoryBytes", "hits", "misses"] {
            #expect(object[key] is Int, "\(key) missing or not an integer")
        }
        #expect(object["entries"] as? Int == 2)
        #expect(object["hits"] as? Int == 3, "hits are lifetime totals over the five runs")
        #expect(object["misses"] as? Int == 2, "the first get of /a and of /b found nothing stored")
        let text = await cli.run(["stats"])
        #expect(text.out.contains("lifetime total"))
        #expect(!text.out.contains("since this process opened"))
    }

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

/// Reasons name policies by their `--policy` name, never by a Swift case or alias name.
@Suite struct PolicyWordingTests {
    @Test("reasons use the policy's name", arguments: [
        (CachePolicy.dontLoad, "no stored response; policy return-cache-dont-load forbids the network"),
        (CachePolicy.returnCacheDataDontLoad, "no stored response; policy return-cache-dont-load forbids the network"),
        (CachePolicy.reloadIgnoringLocalCacheData, "policy reload: the cache is not read"),
    ])
    func policyNames(_ policy: CachePolicy, _ expected: String) throws {
        let request = CacheRequest(url: try #require(URL(string: "http://h/x")))
        let reason = RFC9111.evaluate(request: request, stored: nil, now: Date(timeIntervalSince1970: 0),
                                      options: EvaluationOptions(policy: policy)).reason
        #expect(reason == expected)
        #expect(!reason.contains("dontLoad") && !reason.contains("CacheData"))
    }

    @Test func notCachedErrorUsesTheCLISpelling() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", "--policy", "dont-load", "http://127.0.0.1:1/other.html"])
        #expect(run.code == 1)
        #expect(run.err.hasPrefix("Error: not cached: http://127.0.0.1:1/other.html"))
        #expect(!run.err.contains("dontLoad"))
    }
}
