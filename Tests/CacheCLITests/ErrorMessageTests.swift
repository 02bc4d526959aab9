import Foundation
import Synchronization
import Testing
import CacheTestSupport
import DownloadCache
import HTTPCacheSemantics
import CacheStore
@testable import CacheCLI

/// Messages and output of the CLI: prefetch progress, errors in words, no cache created by inspection, `-o -`.
@Suite(.serialized) struct ErrorMessageTests {
    // Bug 15: one large URL showed nothing until it completed; now the bar shows bytes while it downloads.
    @Test func oneLargeURLShowsBytesBeforeItFinishes() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/big", headers: [("Cache-Control", "max-age=60")], size: 640 << 10,
                                   chunkDelay: 0.03)
        let run = await cli.run(["prefetch", "-"], stdin: origin.url("/big").absoluteString, terminal: true)
        #expect(run.code == 0)
        let frames = run.err.split(separator: "\r").map(String.init)
        let moving = frames.filter { $0.contains("  0/1  ") && !$0.contains("  0/1  0 B  ") }
        #expect(!moving.isEmpty, "no frame showed bytes before completion: \(frames)")
        #expect(frames.last?.contains("1/1  655.4 KB") == true)
    }

    // Bug 15: lines were formatted under the lock but written after it, so a slow writer let a later count
    // overtake an earlier one. The first write blocks until the second update returned (or 0.3 s passed).
    @Test func plainLinesAreWrittenInOrderEvenWhenAWriteIsSlow() async {
        final class Gate: Sendable {
            let entered = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let first = Mutex(true)
            let lines = Mutex<[String]>([])
        }
        let gate = Gate()
        let console = Console(writeOut: { _ in }, writeErr: { data in
            if gate.first.withLock({ f in defer { f = false }; return f }) {
                gate.entered.signal()
                _ = gate.release.wait(timeout: .now() + 0.3)
            }
            gate.lines.withLock { $0.append(String(decoding: data, as: UTF8.self)) }
        })
        let start = Date(timeIntervalSince1970: 1_000)
        let reporter = ProgressReporter(console: console, start: start, now: { start.addingTimeInterval(1) })
        let a = Thread { reporter.update(.init(completed: 1, failed: 0, total: 10, bytes: 10)) }
        a.start()
        _ = gate.entered.wait(timeout: .now() + 5)
        let bDone = DispatchSemaphore(value: 0)
        let b = Thread { reporter.update(.init(completed: 2, failed: 0, total: 10, bytes: 20)); bDone.signal() }
        b.start()
        _ = bDone.wait(timeout: .now() + 5)
        gate.release.signal()
        for _ in 0..<500 where gate.lines.withLock({ $0.count }) < 2 { usleep(1_000) }
        let lines = gate.lines.withLock { $0 }
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("prefetch: 1/10") == true)
        #expect(lines.last?.hasPrefix("prefetch: 2/10") == true)
    }

    @Test func countsNeverGoBackwards() {
        let capture = CapturedConsole(terminal: false)
        let start = Date(timeIntervalSince1970: 1_000)
        let reporter = ProgressReporter(console: capture.console, start: start, now: { start.addingTimeInterval(1) })
        reporter.update(.init(completed: 4, failed: 0, total: 5, bytes: 400))
        reporter.update(.init(completed: 2, failed: 0, total: 5, bytes: 200))
        reporter.update(.init(completed: 5, failed: 0, total: 5, bytes: 300))
        #expect(capture.stderr == "prefetch: 4/5  400 B  400 B/s  ETA 0s\nprefetch: 5/5  400 B  400 B/s  ETA 0s\n")
    }

    @Test func plainLinesEveryTwoSecondsWhileBytesArrive() {
        let capture = CapturedConsole(terminal: false)
        let clock = ProgressReporterTests.Clock()
        let reporter = ProgressReporter(console: capture.console, start: clock.now(), now: clock.now)
        for i in 1...10 {
            clock.advance(0.5)
            reporter.update(.init(completed: 0, failed: 0, total: 1, bytes: Int64(i * 1000), expectedBytes: 20_000))
        }
        let lines = capture.stderr.split(separator: "\n")
        #expect(lines == ["prefetch: 0/1  4.0 KB  2.0 KB/s  ETA 8s", "prefetch: 0/1  8.0 KB  2.0 KB/s  ETA 6s"])
    }

    // Rough edge: "DownloadError.http(status: 500)" in prefetch failures.
    @Test func prefetchFailuresAreWordsNotTypeDumps() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/err", status: 500)
        let url = origin.url("/err").absoluteString
        let text = await cli.run(["prefetch"], stdin: url)
        #expect(text.code == 1)
        #expect(text.err.contains("failed: \(url): HTTP 500 (origin answered 500 "))
        let json = await cli.run(["prefetch", "--json"], stdin: url)
        let failures = try #require(try json.object()["failures"] as? [[String: Any]])
        #expect((failures.first?["error"] as? String)?.hasPrefix("HTTP 500 (origin answered 500 ") == true)
        #expect(!text.err.contains("DownloadError") && !json.out.contains("DownloadError"))
    }

    @Test func storeOpenFailureIsOneLineWithoutTypeNames() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try Data("x".utf8).write(to: cli.directory.appendingPathComponent("file"))
        // `get` works without a cache it cannot open (here the network fails); `ls` reports the store error.
        let get = await cli.run(["get", "--cache-dir", "file/sub", "http://127.0.0.1:1/x"])
        #expect(get.code == 7)
        #expect(get.err.hasPrefix("Error: network error: "), "\(get.err)")
        #expect(!get.err.contains("CacheStoreError") && get.err.filter { $0 == "\n" }.count == 1)
        try FileManager.default.createDirectory(at: cli.directory.appendingPathComponent("c/default"),
                                                withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: cli.directory.appendingPathComponent("c/default/blobs"),
                                                   withDestinationURL: cli.directory)
        let run = await cli.run(["ls", "--cache-dir", "c"])
        #expect(run.code == 1)
        #expect(run.err.hasPrefix("Error: storage error: cannot open cache '"), "\(run.err)")
        #expect(!run.err.contains("CacheStoreError") && !run.err.contains("Error Domain"))
        #expect(run.err.filter { $0 == "\n" }.count == 1)
    }

    @Test("errors say their words, never a Swift type name or an NSError dump", arguments: [
        ("\(CacheStoreError(.permissionDenied, "mkdir /c/blobs: Permission denied (errno 13)"))",
         "permission denied: mkdir /c/blobs: Permission denied (errno 13)"),
        ("x: \(DownloadError.Code.http(status: 500)): origin answered 500", "x: HTTP 500: origin answered 500"),
        ("\(DownloadError.Code.connectionFailed): refused", "connection failed: refused"),
        ("\(DownloadError.Code.timedOut) after \(DownloadError.Code.tooManyRedirects)", "timed out after too many redirects"),
        ("write: " + ErrorText.describe(CocoaError(.fileWriteOutOfSpace, userInfo: [NSFilePathErrorKey: "/x"])),
         "write: disk full"),
        (ErrorText.oneLine("a\nb"), "a b"),
    ])
    func inWords(_ text: String, _ expected: String) {
        #expect(text == expected)
        #expect(!text.contains("Error.") && !text.contains("Error Domain"))
    }

    @Test func foundationErrorsInWords() {
        #expect(ErrorText.describe(CocoaError(.fileReadNoSuchFile)) == "no such file")
        #expect(ErrorText.describe(NSError(domain: NSPOSIXErrorDomain, code: Int(EISDIR))) == "Is a directory")
        #expect(ErrorText.describe(DownloadError(.timedOut, "after 5s")) == "timed out (after 5s)")
    }

    // Rough edge: inspection and maintenance commands created a cache at a mistyped --cache-dir.
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

    // Rough edges: `-o -` wrote a file named "-"; `-o ""` said "cannot write '<cwd>'"; "1 entries".
    @Test func dashOutputIsStdoutAndOneEntryIsSingular() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/t", headers: [("Cache-Control", "max-age=60")], body: "hello")
        let url = origin.url("/t").absoluteString
        let run = await cli.run(["get", "-o", "-", url])
        #expect(run.code == 0)
        #expect(run.out == "hello")
        #expect(!FileManager.default.fileExists(atPath: cli.directory.appendingPathComponent("-").path))
        let empty = await cli.run(["get", "-o", "", url])
        #expect(empty.code == 64)
        #expect(empty.err == "Error: invalid value '' for '--output': expected a file name, or '-' for stdout (see 'dlcache get --help')\n")
        let ls = await cli.run(["ls"])
        #expect(ls.out.hasSuffix("\n1 entry, 5 B\n"))
    }

    // Rough edge: `help bogus` pointed at `dlcache help --help` instead of listing the subcommands.
    @Test func unknownSubcommandListsTheSubcommands() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let names = CommandLineTool.commands.map { $0.name }.joined(separator: ", ")
        for args in [["help", "bogus"], ["bogus"]] {
            let run = await cli.run(args)
            #expect(run.code == 64)
            #expect(run.err == "Error: unknown subcommand 'bogus'; subcommands: \(names) (see 'dlcache --help')\n")
            #expect(run.out.isEmpty)
        }
    }

    // Store/client log lines only with -v.
    @Test func clientLogLinesOnlyWhenVerbose() throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        for verbose in [false, true] {
            let capture = CapturedConsole()
            let location = CacheLocation(directory: cli.directory, namespace: verbose ? "v" : "q")
            let cache = try CacheOpener.open(location, console: capture.console, create: true, verbose: verbose)
            cache.configuration.log("cannot store x: \(CacheStoreError(.diskFull, "no space"))")
            #expect(capture.stderr == (verbose ? "dlcache: cannot store x: disk full: no space\n" : ""))
        }
    }

    // The client sets the User-Agent; it must carry the version `--version` prints.
    @Test func userAgentCarriesTheToolVersion() {
        #expect(CurlTransport.defaultUserAgent == "dlcache/\(CommandLineTool.version)")
    }
}
