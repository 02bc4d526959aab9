import Foundation
import Testing
import CacheCLI
import CacheTestSupport

/// A `--max-disk` below what is stored trims at once in the commands that write (least recently used unpinned
/// entries first, pins kept), and they say what they removed; `stats` only reports (its "over limit" row) and
/// removes nothing; `purge --max-disk SIZE` trims on purpose.
@Suite struct MaxDiskTrimTests {
    static func urls(_ origin: OriginServer) -> [String] {
        (1...4).map { origin.url("/size/100000?n=\($0)").absoluteString }
    }

    /// The value of the `stats` row labelled `label` (e.g. `entries:`), white space trimmed.
    static func row(_ out: String, _ label: String) -> String? {
        out.split(separator: "\n").first { $0.hasPrefix(label) }
            .map { $0.dropFirst(label.count).trimmingCharacters(in: .whitespaces) }
    }

    /// Whether `url` is still stored (answered without the network).
    static func stored(_ url: String, _ cli: CLIHarness) async -> Bool {
        await cli.run(["get", "--policy", "dont-load", "-o", "/dev/null", url]).code == 0
    }

    @Test func aLowerMaxDiskEvictsTheLeastRecentlyUsedAtOnceAndKeepsPins() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let urls = Self.urls(origin)
        for (n, url) in urls.enumerated() {
            let run = await cli.run(["get", "-o", "/dev/null"] + (n == 0 ? ["--pin"] : []) + [url])
            #expect(run.code == 0)
        }
        // 400,000 bytes stored; 250 KiB = 256,000. stats reports and removes nothing.
        let report = await cli.run(["stats", "--max-disk", "250K"])
        #expect(report.code == 0)
        #expect(Self.row(report.out, "entries:") == "4 (1 pinned)", "\(report.out)")
        #expect(Self.row(report.out, "over limit:")?.hasPrefix("on disk is over max disk (stats removes nothing)") == true,
                "\(report.out)")
        #expect(report.err.isEmpty, "\(report.err)")
        // A get given it trims at open: the two oldest unpinned go, the pinned oldest stays; it says so.
        let get = await cli.run(["get", "--max-disk", "250K", "-o", "/dev/null", urls[3]])
        #expect(get.code == 0)
        #expect(get.err == "dlcache: trimmed the cache to --max-disk 250K: removed 2 entries (200.0 KB), least recently "
                + "used first (pinned entries are kept)\n", "\(get.err)")
        let stats = await cli.run(["stats", "--max-disk", "250K"])
        #expect(Self.row(stats.out, "entries:") == "2 (1 pinned)", "\(stats.out)")
        #expect(!stats.out.contains("over limit"))
        // Nothing more to remove: nothing said.
        let again = await cli.run(["get", "--max-disk", "250K", "-o", "/dev/null", urls[3]])
        #expect(again.err.isEmpty, "\(again.err)")
        #expect(await Self.stored(urls[0], cli))
        #expect(!(await Self.stored(urls[1], cli)))
        #expect(!(await Self.stored(urls[2], cli)))
        #expect(await Self.stored(urls[3], cli))
    }

    @Test func statsSaysWhenPinsKeepTheCacheOverItsLimit() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        for url in Self.urls(origin).prefix(3) {
            #expect(await cli.run(["get", "--pin", "-o", "/dev/null", url]).code == 0)
        }
        let text = await cli.run(["stats", "--max-disk", "100K"])
        #expect(Self.row(text.out, "over limit:")?.hasPrefix("what is left over max disk is pinned") == true, "\(text.out)")
        let json = await cli.run(["stats", "--max-disk", "100K", "--json"])
        #expect(try json.object()["overLimit"] as? Bool == true)
        let within = await cli.run(["stats", "--json"])
        #expect(try within.object()["overLimit"] as? Bool == false)
    }

    @Test func purgeTrimsToASize() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        for url in Self.urls(origin) {
            #expect(await cli.run(["get", "-o", "/dev/null", url]).code == 0)
        }
        let purge = await cli.run(["purge", "--max-disk", "150K"])
        #expect(purge.code == 0)
        #expect(purge.out == "trimmed to --max-disk 150K: removed 3 entries (300.0 KB); left 1 entry, 100.0 KB on disk\n",
                "\(purge.out)")
        let json = await cli.run(["purge", "--max-disk", "150K", "--json"])
        #expect(try json.object()["removedEntries"] as? Int == 0)
        let both = await cli.run(["purge", "--all", "--max-disk", "150K"])
        #expect(both.code == 64)
    }

    /// `-s` hides the line (the trim still happens); `--max-entry` alone trims nothing.
    @Test func aSilentGetTrimsWithoutSayingIt() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let urls = Self.urls(origin)
        for url in urls { #expect(await cli.run(["get", "-o", "/dev/null", url]).code == 0) }
        let entryOnly = await cli.run(["get", "--max-entry", "50K", "-o", "/dev/null", urls[3]])
        #expect(entryOnly.err.isEmpty, "\(entryOnly.err)")
        let stats = await cli.run(["stats", "--max-entry", "50K"])
        #expect(Self.row(stats.out, "entries:") == "4 (0 pinned)", "\(stats.out)")
        let silent = await cli.run(["get", "-s", "--max-disk", "150K", "-o", "/dev/null", urls[3]])
        #expect(silent.code == 0)
        #expect(silent.err.isEmpty, "\(silent.err)")
        #expect(Self.row(await cli.run(["stats"]).out, "entries:") == "1 (0 pinned)")
    }
}
