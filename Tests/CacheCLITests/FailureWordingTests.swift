import Foundation
import Testing
@testable import CacheCLI
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import CacheTestSupport

/// Failure messages in the user's terms: an interrupted download says it was stopped (not the library's
/// plumbing), and a timeout that kept a partial says so and that the next get resumes.
@Suite struct FailureWordingTests {
    @Test func anInterruptionSaysWhatHappened() {
        let url = URL(string: "http://h/big")!
        let message = ResponseDescription.failureMessage(DownloadError(.cancelled, "the download was interrupted before it completed (the task reading the stream was cancelled)"),
                                                         url: url, kept: 3_000_000)
        #expect(message == "interrupted: the download of http://h/big was stopped before it completed; the 3.0 MB "
                + "received so far are kept and the next get resumes from there")
        #expect(!ResponseDescription.failureMessage(DownloadError(.cancelled, "x"), url: url).contains("kept"))
    }

    /// A failed connection with bytes kept from an earlier transfer: the connection may never have been made, so
    /// it is not said to be "lost".
    @Test func aFailedConnectionWithBytesKeptSaysItFailed() {
        let url = URL(string: "http://h/big")!
        let message = ResponseDescription.failureMessage(
            DownloadError(.connectionFailed, "Failed to connect to h port 80 after 0 ms: Couldn't connect to server"),
            url: url, kept: 3_000_000)
        #expect(message == "network error: the connection to the origin for http://h/big failed (Failed to connect "
                + "to h port 80 after 0 ms: Couldn't connect to server); the 3.0 MB received so far are kept and the "
                + "next get resumes from there")
    }

    @Test func aTimeoutThatKeptAPartialSaysTheNextGetResumes() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        // A third of the body, unpaced, then held until released: the 1 s limit comes before the body's end.
        try await origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], size: 3_000_000,
                                   etag: "\"v1\"", holdAfter: 1_000_000)
        let output = cli.directory.appendingPathComponent("slow.bin")
        let run = await cli.run(["get", "--max-time", "1", "-o", output.path, origin.url("/slow").absoluteString])
        #expect(run.code == 28)
        #expect(run.err.contains("received so far are kept and the next get resumes from there"), "\(run.err)")
        #expect(!run.err.contains("nothing usable is cached"))
        try await origin.release(path: "/slow")
        let resumed = await cli.run(["get", "-o", output.path, origin.url("/slow").absoluteString])
        #expect(resumed.code == 0)
        #expect(try await origin.hits("/slow").ranged == 1)
        // Nothing kept, nothing cached: the old words are still right.
        let refused = await cli.run(["get", "http://127.0.0.1:9/x"])
        #expect(refused.err.contains("nothing usable is cached"))
        // --no-read never asked the cache: it says so instead.
        for extra in [[String](), ["--json"]] {
            let unread = await cli.run(["get", "--no-read"] + extra + ["http://127.0.0.1:9/x"])
            #expect(unread.err.contains("cannot connect to the origin for http://127.0.0.1:9/x; --no-read skipped the cache ("),
                    "\(unread.err)")
            #expect(!unread.err.contains("nothing usable is cached"))
        }
    }

    /// A second process waiting on the first one's download of the same URL says so under -v, then answers from
    /// what the first stored (one origin request).
    @Test(.enabled(if: ExecutableTests.binary != nil, "dlcache is not built next to the test bundle"))
    func waitingForAnotherProcessIsSaidUnderVerbose() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-wait-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = ["DLCACHE_DIR": dir.path, "HOME": dir.path]
        // The origin holds the body after its first megabyte until released: the first process is downloading
        // (holding the URL's key lock) for as long as the second takes to reach the lock, however loaded the
        // machine; it is released once the second says it waits, well within the 30 s lock timeout.
        try await origin.configure(path: "/slow", headers: [("Cache-Control", "max-age=600")], size: 6_250_000,
                                   holdAfter: 1_000_000)
        let binary = try #require(ExecutableTests.binary).path
        let url = origin.url("/slow").absoluteString
        let first = try ChildProcess([binary, "get", "-o", "/dev/null", url], environment: env, stdout: .discard)
        defer { first.killAndReap() }
        var deadline = ContinuousClock.now + .seconds(30)
        while try await origin.hits("/slow").total == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        // The second's standard error goes to a file (sh redirects it, then execs dlcache), read while it runs.
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("dlcache-wait-\(UUID().uuidString).err")
        defer { try? FileManager.default.removeItem(at: log) }
        let second = try ChildProcess(["/bin/sh", "-c", "exec \"$0\" \"$@\" 2>\"$SECOND_LOG\"", binary,
                                       "get", "-v", "-o", "/dev/null", url],
                                      environment: env.merging(["SECOND_LOG": log.path]) { $1 }, stdout: .discard)
        defer { second.killAndReap() }
        let waiting = "waiting for another dlcache process downloading \(url)"
        func errorOutput() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        deadline = ContinuousClock.now + .seconds(60)
        while !errorOutput().contains(waiting), second.termination == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        try await origin.release(path: "/slow")
        #expect(second.wait(timeout: .seconds(60)) == .exited(0), "\(errorOutput())")
        #expect(errorOutput().contains(waiting), "\(errorOutput())")
        #expect(first.wait(timeout: .seconds(60))?.status == 0)
        #expect(try await origin.hits("/slow").total == 1)
    }

    /// The same on a terminal without -v (a get waiting silently looks hung). The URL's key lock is held here for
    /// the whole get, as a dlcache process fetching the URL holds it: the get says it waits as soon as it finds the
    /// lock held, however late a loaded machine lets it get there, and after the lock timeout (30 s) fetches the URL
    /// itself, since the holder stored nothing.
    @Test func waitingForAnotherProcessIsSaidOnATerminal() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/held", headers: [("Cache-Control", "max-age=600")], body: "fetched after the wait")
        let url = origin.url("/held")
        let holder = try CacheStore(configuration: CacheStore.Configuration(directory: cli.directory))
        defer { holder.close() }
        guard case .acquired(let lock, _) = await holder.acquireKeyLock(RFC9111.primaryKey(method: "GET", url: url),
                                                                        timeout: 10) else {
            Issue.record("the key lock of \(url) could not be taken")
            return
        }
        defer { lock.release() }
        let output = cli.directory.appendingPathComponent("out.bin")
        let second = await cli.run(["get", "-o", output.path, url.absoluteString], terminal: true)
        #expect(second.code == 0, "\(second.err)")
        #expect(second.err.contains("waiting for another dlcache process downloading \(url.absoluteString)"), "\(second.err)")
        #expect(try Data(contentsOf: output) == Data("fetched after the wait".utf8))
        #expect(try await origin.hits("/held").total == 1)
    }
}

/// `--max-entry` above `--max-disk` is lowered to the disk limit (a body larger than the whole cache is never
/// stored), and the run says so instead of doing it silently.
@Suite struct AnEntryLimitOverTheDiskLimitIsSaidTests {
    @Test func getWarnsThatTheEntryLimitIsTheDiskLimit() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["stats", "--max-disk", "10M", "--max-entry", "20M"])
        #expect(!run.err.contains("Warning"), "stats only reports: \(run.err)")
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let get = await cli.run(["get", "--max-disk", "10M", "--max-entry", "20M", origin.url("/size/10").absoluteString])
        #expect(get.code == 0)
        #expect(get.err.contains("Warning: --max-entry 20.0 MiB is over the disk limit 10.0 MiB (--max-disk); the entry limit is 10.0 MiB"),
                "\(get.err)")
        let quiet = await cli.run(["get", "-s", "--max-disk", "10M", "--max-entry", "20M", origin.url("/size/10").absoluteString])
        #expect(quiet.err.isEmpty, "\(quiet.err)")
    }
}

/// The clause of an interrupted transfer that kept nothing because its body is over the disk limit names the
/// body's complete length: a 206 resuming a partial announces only the rest in its Content-Length.
@Suite struct ABodyOverTheDiskLimitIsNamedByItsCompleteLengthTests {
    @Test func a206IsNamedByItsContentRangesCompleteLength() {
        var headers = HTTPHeaders()
        headers.add("Content-Length", "234500000")
        headers.add("Content-Range", "bytes 15500000-249999999/250000000")
        let clause = EntryLimitNotice.notKeptClause(headers: headers, limit: 40 << 20)
        #expect(clause.contains("the 250.0 MB body is over the disk limit 40.0 MiB (--max-disk)"), "\(clause)")
        #expect(clause.contains("the bytes kept before were dropped too"), "\(clause)")
    }

    @Test func a200IsNamedByItsContentLength() {
        var headers = HTTPHeaders()
        headers.add("Content-Length", "250000000")
        let clause = EntryLimitNotice.notKeptClause(headers: headers, limit: 40 << 20)
        #expect(clause.contains("the 250.0 MB body is over the disk limit"), "\(clause)")
        #expect(!clause.contains("dropped"), "\(clause)")
        #expect(EntryLimitNotice.notKeptClause(headers: headers, limit: 300 << 20).isEmpty)
    }
}

/// `get --no-store` neither uses nor extends a partial kept by an earlier run, so a failure of it never says that
/// the bytes received so far are kept.
@Suite struct ANoStoreGetClaimsNoPartialTests {
    @Test func aCutNoStoreGetDoesNotSayAnEarlierPartialIsItsOwn() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let (output, cutError) = try await KeptPartialSetup.make(origin, cli)
        #expect(cutError.contains("are kept"), "\(cutError)")
        try await origin.configure(path: "/cut", headers: [("Cache-Control", "max-age=600")],
                                   size: KeptPartialSetup.size, etag: "\"v1\"", truncate: true)
        let again = await cli.run(["get", "--no-store", "-o", output.path, origin.url("/cut").absoluteString])
        #expect(again.code != 0)
        #expect(!again.err.contains("are kept"), "\(again.err)")
        #expect(again.err.contains("Error:"), "\(again.err)")
    }
}
