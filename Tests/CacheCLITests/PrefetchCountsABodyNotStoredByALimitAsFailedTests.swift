import Foundation
import Testing
import CacheTestSupport
@testable import CacheCLI

/// `dlcache prefetch` exists to have URLs in the cache afterwards. A body a storage limit keeps out (over
/// `--max-entry`, or no room beside the pinned entries within `--max-disk`) is fetched but not stored: it is
/// listed as failed with the reason, the run exits 1, and its bytes are not left behind in `tmp/`.
@Suite(.serialized) struct PrefetchCountsABodyNotStoredByALimitAsFailedTests {
    static func tmpFiles(_ cli: CLIHarness) throws -> [String] {
        let tmp = cli.directory.appendingPathComponent("default/tmp")
        guard FileManager.default.fileExists(atPath: tmp.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: tmp.path)
    }

    @Test func aBodyOverTheEntryLimitIsAFailureAndLeavesNoFile() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let small = origin.url("/size/1000").absoluteString
        let big = origin.url("/size/3000000").absoluteString
        let run = await cli.run(["prefetch", "--json", "--max-entry", "1M", "-"], stdin: small + "\n" + big + "\n")
        #expect(run.code == 1)
        let summary = try run.object()
        #expect(summary["succeeded"] as? Int == 1)
        #expect(summary["failed"] as? Int == 1)
        let failures = try #require(summary["failures"] as? [[String: Any]])
        #expect(failures.first?["url"] as? String == big)
        let error = try #require(failures.first?["error"] as? String)
        #expect(error.contains("not stored") && error.contains("entry limit"), "\(error)")
        let left = try Self.tmpFiles(cli)
        #expect(left.isEmpty, "\(left)")
        let entries = try #require(try await cli.run(["ls", "--json"]).json() as? [[String: Any]])
        #expect(entries.count == 1)
    }

    @Test func aBodyWithoutRoomBesideThePinnedEntriesIsAFailureAndLeavesNoFile() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let pinned = origin.url("/size/3000000").absoluteString
        let limits = ["--max-disk", "4M", "--max-entry", "4M"]
        let first = await cli.run(["prefetch", "--pin"] + limits + ["-"], stdin: pinned + "\n")
        #expect(first.code == 0, "\(first.err)")
        let other = origin.url("/size/2000000").absoluteString
        let run = await cli.run(["prefetch", "--json"] + limits + ["-"], stdin: other + "\n")
        #expect(run.code == 1)
        let failures = try #require(try run.object()["failures"] as? [[String: Any]])
        let error = try #require(failures.first?["error"] as? String)
        #expect(error.contains("not stored") && error.contains("pinned"), "\(error)")
        let left = try Self.tmpFiles(cli)
        #expect(left.isEmpty, "\(left)")
        // The pinned entry is still there.
        let entries = try #require(try await cli.run(["ls", "--json"]).json() as? [[String: Any]])
        #expect(entries.count == 1 && entries.first?["pinned"] as? Bool == true)
    }
}
