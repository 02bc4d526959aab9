import Foundation
import Testing
import CacheTestSupport
import DownloadCache
import CacheStore
import HTTPCacheSemantics
@testable import CacheCLI

/// End-to-end runs of ls, info, stats, rm, pin, unpin, purge and verify against the loopback origin.
@Suite(.serialized) struct InspectionCommandTests {
    /// Starts an origin with a fresh (/fresh, max-age=600) and a stale (/stale, max-age=0) resource, both fetched.
    static func seeded() async throws -> (OriginServer, CLIHarness, fresh: String, stale: String) {
        let origin = try await OriginServer.start()
        let cli = try CLIHarness()
        try await origin.configure(path: "/fresh", headers: [("Cache-Control", "max-age=600")], body: "fresh body")
        try await origin.configure(path: "/stale", headers: [("Cache-Control", "max-age=0")], body: "stale", etag: "\"s\"")
        let fresh = origin.url("/fresh").absoluteString
        let stale = origin.url("/stale").absoluteString
        for url in [fresh, stale] {
            let run = await cli.run(["get", url])
            #expect(run.code == 0, "seeding \(url): \(run.err)")
        }
        return (origin, cli, fresh, stale)
    }

    @Test func lsJSONHasTheContractFields() async throws {
        let (origin, cli, fresh, stale) = try await Self.seeded()
        defer { origin.stop(); cli.cleanUp() }
        let run = await cli.run(["ls", "--json"])
        #expect(run.code == 0)
        let entries = try #require(try run.json() as? [[String: Any]])
        #expect(entries.count == 2)
        for entry in entries {
            #expect(Set(entry.keys) == ["url", "status", "bytes", "age", "fresh", "pinned", "storage", "namespace",
                                        "variant"])
            #expect(entry["variant"] as? String == "")
            #expect(entry["storage"] as? String == "permanent")
            #expect(entry["namespace"] as? String == "default")
            #expect(entry["pinned"] as? Bool == false)
        }
        let byURL = Dictionary(uniqueKeysWithValues: entries.map { ($0["url"] as? String ?? "", $0) })
        #expect(byURL[fresh]?["fresh"] as? Bool == true)
        #expect(byURL[fresh]?["bytes"] as? Int == 10)
        #expect(byURL[stale]?["fresh"] as? Bool == false)

        let text = await cli.run(["ls"])
        // Columns are as wide as their widest value (an age of "1m17s" on a loaded machine widens AGE): the words.
        let header = text.out.split(separator: "\n").first.map { $0.split(separator: " ").map(String.init) }
        #expect(header == ["STATUS", "BYTES", "AGE", "STATE", "PIN", "STORAGE", "URL"])
        #expect(text.out.hasSuffix("2 entries, 15 B\n"))
    }

    @Test func namespacesAreSeparate() async throws {
        let (origin, cli, _, _) = try await Self.seeded()
        defer { origin.stop(); cli.cleanUp() }
        // A namespace nothing was written to is not created by `ls`: exit 1, named.
        let other = await cli.run(["ls", "--json", "--namespace", "other"])
        #expect(other.code == 1)
        #expect(other.err == "Error: no cache at \(cli.directory.path) (namespace 'other')\n")
        #expect(!FileManager.default.fileExists(atPath: cli.directory.appendingPathComponent("other").path))
        let url = origin.url("/ns-other").absoluteString
        try await origin.configure(path: "/ns-other", headers: [("Cache-Control", "max-age=60")], body: "x")
        #expect(await cli.run(["get", "--namespace", "other", "-o", "/dev/null", url]).code == 0)
        let entries = try #require(try await cli.run(["ls", "--json", "--namespace", "other"]).json() as? [[String: Any]])
        #expect(entries.map { $0["url"] as? String } == [url])
    }

    @Test func infoExplainsFreshnessPinningAndStorage() async throws {
        let (origin, cli, fresh, stale) = try await Self.seeded()
        defer { origin.stop(); cli.cleanUp() }
        let text = await cli.run(["info", fresh])
        #expect(text.code == 0)
        #expect(text.out.contains("state:     fresh\n"))
        #expect(text.out.contains("lifetime:  10m00s (600s)"))
        #expect(text.out.contains("pinned:    no\n"))
        #expect(text.out.contains("storage:   permanent"))
        #expect(text.out.contains("  Cache-Control: max-age=600\n"))
        #expect(text.out.contains("decision:  fresh"))

        let json = await cli.run(["info", "--json", stale])
        let entries = try #require(try json.json() as? [[String: Any]])
        let entry = try #require(entries.first)
        #expect(entry["fresh"] as? Bool == false)
        #expect(entry["freshnessLifetime"] as? Int == 0)
        #expect((entry["reason"] as? String)?.isEmpty == false)
        let headers = try #require(entry["headers"] as? [[String]])
        #expect(headers.contains { $0.first?.lowercased() == "etag" && $0.last == "\"s\"" })

        let missing = await cli.run(["info", origin.url("/nothing").absoluteString])
        #expect(missing.code == 1)
        #expect(missing.err == "Error: not cached: nothing stored for \(origin.url("/nothing").absoluteString)\n")
    }

    @Test func statsJSONShape() async throws {
        let (origin, cli, _, _) = try await Self.seeded()
        defer { origin.stop(); cli.cleanUp() }
        let object = try await cli.run(["stats", "--json"]).object()
        for key in ["entries", "bytes", "memoryBytes", "hits", "misses"] {
            #expect(object[key] is Int, "\(key) missing or not an integer")
        }
        #expect(object["entries"] as? Int == 2)
        #expect((object["bytes"] as? Int ?? 0) >= 15)
    }

    @Test func rmRemovesAndReportsMissingEntries() async throws {
        let (origin, cli, fresh, _) = try await Self.seeded()
        defer { origin.stop(); cli.cleanUp() }
        let removed = await cli.run(["rm", fresh])
        #expect(removed.code == 0)
        #expect(removed.out == "removed 1 entry for \(fresh)\n")
        let again = await cli.run(["rm", fresh])
        #expect(again.code == 1)
        #expect(again.err.hasPrefix("Error: not cached: "))
        let next = try await cli.run(["get", "--json", fresh]).object()
        #expect(next["source"] as? String == "network")
    }

    @Test func pinAndUnpin() async throws {
        let (origin, cli, fresh, _) = try await Self.seeded()
        defer { origin.stop(); cli.cleanUp() }
        let pinned = await cli.run(["pin", "--json", fresh])
        #expect(pinned.code == 0)
        #expect(try pinned.object()["pinned"] as? Bool == true)
        var entries = try #require(try await cli.run(["ls", "--json"]).json() as? [[String: Any]])
        #expect(entries.first { $0["url"] as? String == fresh }?["pinned"] as? Bool == true)
        #expect(await cli.run(["unpin", fresh]).code == 0)
        entries = try #require(try await cli.run(["ls", "--json"]).json() as? [[String: Any]])
        #expect(entries.allSatisfy { $0["pinned"] as? Bool == false })
        let missing = await cli.run(["pin", origin.url("/x").absoluteString])
        #expect(missing.code == 1)
    }

    @Test func purgeExpiredKeepsFreshAndPinned() async throws {
        let (origin, cli, fresh, stale) = try await Self.seeded()
        defer { origin.stop(); cli.cleanUp() }
        try await origin.configure(path: "/pinned-stale", headers: [("Cache-Control", "max-age=0")], body: "p")
        let pinnedStale = origin.url("/pinned-stale").absoluteString
        #expect(await cli.run(["get", "--pin", pinnedStale]).code == 0)

        let purge = await cli.run(["purge", "--expired", "--json"])
        #expect(purge.code == 0)
        #expect(try purge.object()["purged"] as? Int == 1)
        let urls = Set(try #require(try await cli.run(["ls", "--json"]).json() as? [[String: Any]]).compactMap { $0["url"] as? String })
        #expect(urls == [fresh, pinnedStale])
        #expect(!urls.contains(stale))

        let all = await cli.run(["purge", "--all"])
        #expect(all.out == "purged 2 entries (--all)\n")
        #expect(await cli.run(["ls", "--json"]).out == "[]\n")
    }

    @Test func purgeSessionRemovesOnlySessionEntries() async throws {
        // Session entries vanish when a store is next opened, so this drives one open cache directly.
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let cache = try DownloadCache(configuration: .init(directory: cli.directory))
        _ = try await cache.response(for: CacheRequest(url: origin.url("/size/10")), options: RequestOptions(storage: .session))
        _ = try await cache.response(for: CacheRequest(url: origin.url("/size/20")))
        #expect(cache.entryDescriptions().map(\.storageClass).sorted { $0.rawValue < $1.rawValue } == [.permanent, .session])
        #expect(try cache.purge(.session) == 1)
        #expect(cache.entryDescriptions().map(\.url) == [origin.url("/size/20").absoluteString])
    }

    @Test func verifyFindsAndRepairsACorruptBody() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let url = origin.url("/size/200000").absoluteString
        let fetched = try await cli.run(["get", "--json", url]).object()
        let path = try #require(fetched["path"] as? String)

        let clean = await cli.run(["verify", "--json"])
        #expect(clean.code == 0)
        #expect(clean.out == #"{"checked":1,"checkedPartials":0,"kept":0,"ok":true,"problems":[],"repaired":0}"# + "\n")

        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: 1000)
        try handle.write(contentsOf: Data([0xFF, 0xFF, 0xFF]))
        try handle.close()

        let broken = await cli.run(["verify", "--json"])
        #expect(broken.code == 1)
        let report = try broken.object()
        #expect(report["ok"] as? Bool == false)
        let problems = try #require(report["problems"] as? [[String: Any]])
        #expect(problems.count == 1)
        #expect(problems.first?["url"] as? String == url)
        #expect(problems.first?["kind"] as? String == "checksum")
        #expect(problems.first?["kept"] as? Bool == false)

        let repaired = await cli.run(["verify", "--repair"])
        #expect(repaired.code == 0)
        #expect(repaired.out.contains("repaired 1"))
        let after = try await cli.run(["verify", "--json"]).object()
        #expect(after["ok"] as? Bool == true)
        #expect(after["checked"] as? Int == 0)
    }

    /// Inspection and maintenance commands never create a cache: a mistyped `--cache-dir` is an error.
    @Test("no cache is created by inspection commands", arguments: [
        ["ls"], ["stats"], ["info", "http://h/x"], ["rm", "http://h/x"], ["pin", "http://h/x"],
        ["unpin", "http://h/x"], ["purge", "--all"], ["verify"],
    ])
    func noCacheHere(_ args: [String]) async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let missing = cli.directory.appendingPathComponent("typo")
        let run = await cli.run(args + ["--cache-dir", missing.path])
        #expect(run.code == 1)
        #expect(run.err == "Error: no cache at \(missing.path)\n")
        #expect(!FileManager.default.fileExists(atPath: missing.path))
        let other = await cli.run(args + ["--cache-dir", missing.path, "--namespace", "n1"])
        #expect(other.err == "Error: no cache at \(missing.path) (namespace 'n1')\n")
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

    /// `verify` and `ls` count one entry in the singular.
    @Test func oneEntryIsCountedInTheSingular() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/t", headers: [("Cache-Control", "max-age=60")], body: "hello")
        #expect(await cli.run(["get", origin.url("/t").absoluteString]).code == 0)
        let run = await cli.run(["verify"])
        #expect(run.code == 0)
        #expect(run.out == "checked 1 entry: ok\n")
        let ls = await cli.run(["ls"])
        #expect(ls.out.hasSuffix("\n1 entry, 5 B\n"))
    }
}
