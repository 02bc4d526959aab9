import Foundation
import Testing
import CacheCLI
import CacheTestSupport

/// A body over `--max-entry` is delivered but not stored: `get` says so on stderr (not under `-s`) and in
/// `--json` (`stored: false`), and an interrupted transfer of such a body does not claim its bytes are kept.
/// An interrupted transfer that did keep its bytes says so, also when it was cancelled (Ctrl-C).
@Suite struct BodyOverEntryLimitIsSaidTests {
    static let size = 3_000_000

    @Test func aBodyOverTheEntryLimitIsDeliveredWithAWarning() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                   etag: "\"v1\"")
        let url = origin.url("/big").absoluteString
        let output = cli.directory.appendingPathComponent("big.bin")
        let plain = await cli.run(["get", "--max-entry", "1M", "-o", output.path, url])
        #expect(plain.code == 0)
        #expect(try Data(contentsOf: output).count == Self.size)
        #expect(plain.err == "Warning: not stored: the 3.0 MB body of \(url) is over the entry limit 1.0 MiB "
                + "(--max-entry; default an eighth of --max-disk); it was delivered, and the next get downloads it again\n",
                "\(plain.err)")
        let silent = await cli.run(["get", "-s", "--max-entry", "1M", "-o", output.path, url])
        #expect(silent.code == 0)
        #expect(silent.err.isEmpty, "\(silent.err)")
        let json = await cli.run(["get", "--json", "--max-entry", "1M", "-o", output.path, url])
        #expect(json.code == 0)
        let object = try json.object()
        #expect(object["stored"] as? Bool == false)
        #expect((object["reason"] as? String)?.contains("entry limit") == true)
        #expect(json.err.hasPrefix("Warning: not stored:"), "\(json.err)")
        #expect(try await origin.hits("/big").total == 3)
        // Within the limit: stored, no warning; the hit says stored too.
        let stored = await cli.run(["get", "--json", "-o", output.path, url])
        #expect(try stored.object()["stored"] as? Bool == true)
        #expect(stored.err.isEmpty, "\(stored.err)")
        let hit = await cli.run(["get", "--json", "-o", output.path, url])
        #expect(try hit.object()["stored"] as? Bool == true)
        #expect(try hit.object()["source"] as? String == "cache")
    }

    @Test func anInterruptedBodyOverTheDiskLimitDoesNotClaimItsBytesAreKept() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        // A third of the body, unpaced, then held: the 1 s limit always comes before the body's end.
        try await origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                   etag: "\"v1\"", holdAfter: Self.size / 3)
        let output = cli.directory.appendingPathComponent("slow.bin")
        let run = await cli.run(["get", "--max-disk", "1M", "--max-time", "1", "-o", output.path,
                                 origin.url("/slow").absoluteString])
        #expect(run.code == 28)
        #expect(!run.err.contains("are kept"), "\(run.err)")
        #expect(run.err.contains("; nothing was kept to resume: the 3.0 MB body is over the disk limit 1.0 MiB "
                                 + "(--max-disk), so the next get starts again from byte 0"),
                "\(run.err)")
        let ls = await cli.run(["ls"])
        #expect(!ls.out.contains("partial"), "\(ls.out)")
    }

    /// A body over the entry limit is delivered without being stored, but its interrupted download is kept as a
    /// partial (within --max-disk) and the next get goes on from there: a big file resumes under the default limits.
    @Test func anInterruptedBodyOverTheEntryLimitIsResumedAndDeliveredUnstored() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let url = origin.url("/cut").absoluteString
        try await origin.configure(path: "/cut", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                   etag: "\"v1\"", truncate: true)
        let output = cli.directory.appendingPathComponent("cut.bin")
        let limits = ["--max-entry", "1M", "--max-disk", "64M"]
        let cut = await cli.run(["get"] + limits + ["-o", output.path, url])
        #expect(cut.code == 18, "\(cut.err)")
        #expect(!cut.err.contains("nothing was kept"), "\(cut.err)")
        let ls = await cli.run(["ls"])
        #expect(ls.out.contains("partial"), "\(ls.out)")
        try await origin.configure(path: "/cut", headers: [("Cache-Control", "max-age=600")], size: Self.size,
                                   etag: "\"v1\"")
        let whole = await cli.run(["get"] + limits + ["-o", output.path, url])
        #expect(whole.code == 0, "\(whole.err)")
        #expect(try Data(contentsOf: output) == Data((0..<Self.size).map { UInt8($0 % 256) }))
        #expect(whole.err.hasPrefix("Warning: not stored:"), "\(whole.err)")
        let hits = try await origin.hits("/cut")
        #expect(hits.total == 2 && hits.partial == 1, "the second get asked only for the rest")
        let after = await cli.run(["ls"])
        #expect(!after.out.contains("/cut"), "nothing is left: \(after.out)")
    }

    /// Ctrl-C cancels the command's task; the exchange ends after the caller returned, keeping its bytes. The
    /// message waits for it and says what was kept. (The origin holds the body after its first megabyte: the
    /// cancel comes before its end however loaded the machine.)
    @Test func aCancelledDownloadSaysWhatItKept() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], size: 20_000_000,
                                   etag: "\"v1\"", holdAfter: 1_000_000)
        let output = cli.directory.appendingPathComponent("slow.bin")
        let url = origin.url("/slow").absoluteString
        let task = Task { await cli.run(["get", "-o", output.path, url]) }
        // Cancel once the body is flowing (bytes in the output file).
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline,
              ((try? FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int) ?? 0) < 300_000 {
            try await Task.sleep(for: .milliseconds(20))
        }
        task.cancel()
        let run = await task.value
        #expect(run.code != 0)
        #expect(run.err.hasPrefix("Error: interrupted: the download of \(url) was stopped before it completed; the "), "\(run.err)")
        #expect(run.err.contains("received so far are kept and the next get resumes from there"), "\(run.err)")
        let ls = await cli.run(["ls"])
        #expect(ls.out.contains("partial"), "\(ls.out)")
    }
}
