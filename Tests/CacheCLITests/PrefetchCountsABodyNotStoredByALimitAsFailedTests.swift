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

    /// A body whose Content-Length is already over the limit is not downloaded at all: the origin holds this one
    /// after its first kilobyte for 60 s, so a prefetch that read on would still be waiting.
    @Test func aBodyAnnouncedOverTheEntryLimitIsNotFetched() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/held", headers: [("Cache-Control", "max-age=600")], size: 3_000_000,
                                   holdAfter: 1_000)
        let started = ContinuousClock.now
        let run = await cli.run(["prefetch", "--json", "--max-entry", "1M", "-"], stdin: origin.url("/held").absoluteString + "\n")
        #expect(ContinuousClock.now - started < .seconds(50), "the prefetch waited for the held body")
        try await origin.release(path: "/held")
        #expect(run.code == 1)
        let failures = try #require(try run.object()["failures"] as? [[String: Any]])
        let error = try #require(failures.first?["error"] as? String)
        #expect(error.contains("not stored: body of 3000000 bytes is over the 1048576-byte entry limit of 1.0 MiB (--max-entry; default an eighth of --max-disk); not fetched"),
                "\(error)")
        #expect(try Self.tmpFiles(cli).isEmpty)
        #expect((try await cli.run(["ls", "--json"]).json() as? [[String: Any]])?.isEmpty == true)
    }

    /// Without a Content-Length the size is learned as the body arrives: the download stops once it passes the
    /// limit. The origin holds this one after 2 MB for 60 s, so a prefetch that read on would still be waiting.
    @Test func aBodyOfUnknownLengthStopsAtTheEntryLimit() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/unframed", headers: [("Cache-Control", "max-age=600")], size: 3_000_000,
                                   noContentLength: true, holdAfter: 2_000_000)
        let started = ContinuousClock.now
        let run = await cli.run(["prefetch", "--json", "--max-entry", "1M", "-"], stdin: origin.url("/unframed").absoluteString + "\n")
        #expect(ContinuousClock.now - started < .seconds(50), "the prefetch waited for the held body")
        try await origin.release(path: "/unframed")
        #expect(run.code == 1)
        let failures = try #require(try run.object()["failures"] as? [[String: Any]])
        let error = try #require(failures.first?["error"] as? String)
        #expect(error.contains("not stored: the body went over the 1048576-byte entry limit of 1.0 MiB (--max-entry"), "\(error)")
        #expect(error.contains("stopped there"), "\(error)")
        #expect(try Self.tmpFiles(cli).isEmpty)
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
