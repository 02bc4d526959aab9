import Foundation
import Testing
import CacheTestSupport
import DownloadCache
import HTTPCacheSemantics
import CacheStore
@testable import CacheCLI

/// Errors and log lines in words: never a Swift type name or an NSError dump, one line each; log lines only with `-v`.
@Suite(.serialized) struct ErrorMessageTests {
    /// Prefetch failures name the HTTP status in words, in text and in `--json`.
    @Test func prefetchFailuresAreWordsNotTypeDumps() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/err", status: 500)
        let url = origin.url("/err").absoluteString
        let text = await cli.run(["prefetch"], stdin: url)
        #expect(text.code == 1)
        #expect(text.err.contains("failed: \(url): HTTP 500 Internal Server Error\n"), "\(text.err)")
        let json = await cli.run(["prefetch", "--json"], stdin: url)
        let failures = try #require(try json.object()["failures"] as? [[String: Any]])
        #expect(failures.first?["error"] as? String == "HTTP 500 Internal Server Error")
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
        #expect(ErrorText.describe(DownloadError(.timedOut, "after 5s")) == "timed out: after 5s")
        // The detail a transport failure carries already starts with the class's words: said once.
        #expect(ErrorText.describe(DownloadError(TransportError.truncatedChunked(received: 7)))
                    == "truncated body: connection closed after 7 bytes of a chunked body")
    }

    /// Store and client log lines are shown only with `-v`.
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

}
