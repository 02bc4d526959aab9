import Foundation
import Testing
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
@testable import CacheCLI

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
