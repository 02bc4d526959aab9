import Foundation
import Testing
import CacheTestSupport
@testable import CacheCLI

/// `info`, `rm`, `pin` and `unpin` of a URL with nothing stored fail as `not-cached` (exit 1) and name the URL,
/// in the `--json` error object as `get --policy dont-load` does.
@Suite struct NotCachedEntryErrorTests {
    @Test(arguments: ["info", "rm", "pin", "unpin"])
    func nothingStoredIsNotCachedWithTheURL(command: String) async throws {
        let origin = try await OriginServer.start()
        let cli = try CLIHarness()
        defer { origin.stop(); cli.cleanUp() }
        let seeded = await cli.run(["get", origin.url("/size/10").absoluteString])   // the cache exists
        #expect(seeded.code == 0, "\(seeded.err)")
        let url = origin.url("/nothing").absoluteString
        let run = await cli.run([command, "--json", url])
        #expect(run.code == 1)
        #expect(run.err == "Error: not cached: nothing stored for \(url)\n")
        let error = try #require(try run.object()["error"] as? [String: Any])
        #expect(error["kind"] as? String == "not-cached")
        #expect(error["url"] as? String == url)
        #expect(error["exitCode"] as? Int == 1)
    }
}
