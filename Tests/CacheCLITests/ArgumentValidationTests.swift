import Foundation
import Testing
import CacheTestSupport
@testable import CacheCLI

/// Numbers, URL lists and URLs are validated at parse time, with messages naming the bad value.
@Suite(.serialized) struct ArgumentValidationTests {
    // Bug 2: out-of-range seconds crashed (SIGILL) later in a Double → Int conversion; now exit 64 naming the value.
    @Test("seconds options are bounded at parse time", arguments: [
        (["get", "--expires-in", "1e19", "http://127.0.0.1:1/x"],
         "Error: invalid value '1e19' for '--expires-in': expected a number of seconds from 0 to 3153600000 (100 years) (see 'dlcache get --help')"),
        (["get", "--expires-in", "-5", "http://127.0.0.1:1/x"],
         "Error: invalid value '-5' for '--expires-in': expected a number of seconds from 0 to 3153600000 (100 years) (see 'dlcache get --help')"),
        (["get", "--max-time", "1e300", "http://127.0.0.1:1/x"],
         "Error: invalid value '1e300' for '--max-time': expected a number of seconds > 0 and <= 86400 (1 day) (see 'dlcache get --help')"),
        (["get", "--max-time", "0", "http://127.0.0.1:1/x"],
         "Error: invalid value '0' for '--max-time': expected a number of seconds > 0 and <= 86400 (1 day) (see 'dlcache get --help')"),
        (["get", "--max-time", "-1", "http://127.0.0.1:1/x"],
         "Error: invalid value '-1' for '--max-time': expected a number of seconds > 0 and <= 86400 (1 day) (see 'dlcache get --help')"),
        (["get", "--max-time", "inf", "http://127.0.0.1:1/x"],
         "Error: invalid value 'inf' for '--max-time': expected a number of seconds > 0 and <= 86400 (1 day) (see 'dlcache get --help')"),
    ])
    func boundedSeconds(_ args: [String], _ line: String) async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(args)
        #expect(run.code == 64)
        #expect(run.err == line + "\n")
    }

    @Test func theLargestAcceptedValuesStillWork() throws {
        let parsed = ParsedArguments(flags: [], values: ["expires-in": ["3153600000"], "max-time": ["86400"]],
                                     positionals: [])
        let options = try GetCommand.requestOptions(parsed)
        #expect(options.expiration == .seconds(SecondsLimit.expiresIn))
        #expect(options.timeout == SecondsLimit.maxTime)
    }

    // Bug 2, second half: entries stored by an older build may carry any lifetime; printing them must not trap.
    @Test func hugeSecondsNeverTrapWhenPrinted() {
        #expect(InfoCommand.seconds(1e19) == "2562047788015215h30m (9223372036854775807s)")
        #expect(InfoCommand.seconds(-1e300).hasSuffix("s"))
        #expect(Formatting.duration(1e300) == "2562047788015215h30m")
        #expect(Formatting.age(1e300) == "9223372036854775807s")
        #expect(JSONOutput.seconds(1e300) as? Int == Int.max)
        #expect(JSONOutput.seconds(-1e300) as? Int == Int.min)
        #expect(Formatting.wholeSeconds(.nan) == 0)
        #expect(ProgressReporter.rate(bytes: Int64.max, elapsed: 1e-300).hasSuffix("/s"))
    }

    // Bug 3: a CRLF list was one URL ("\r\n" is one Character, so split("\n") never split); a BOM was rejected.
    @Test func crlfBomCommentsAndBlankLines() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let a = origin.url("/size/10").absoluteString
        let b = origin.url("/size/20").absoluteString
        let list = "\u{FEFF}# list\r\n\r\n\(a)\r\n  \(b)  \r\n"
        try Data(list.utf8).write(to: cli.directory.appendingPathComponent("crlf.txt"))
        for args in [["prefetch", "--json", "-"], ["prefetch", "--json", "crlf.txt"]] {
            let run = await cli.run(args, stdin: list)
            #expect(run.code == 0, "\(args): \(run.err)")
            let summary = try run.object()
            #expect(summary["total"] as? Int == 2)
            #expect(summary["succeeded"] as? Int == 2)
            #expect(summary["bytes"] as? Int == 30)
        }
    }

    @Test func listLinesAreNumberedAcrossCRLFAndLoneCR() throws {
        let urls = PrefetchCommand.parseURLList("http://h/1\r\nhttp://h/2\rhttp://h/3\n\nhttp://h/4").urls
        #expect(urls.map(\.path) == ["/1", "/2", "/3", "/4"])
        let list = PrefetchCommand.parseURLList("\u{FEFF}http://h/1\r\n\r\nnope\r\n")
        #expect(list.urls.map(\.path) == ["/1"])
        #expect(list.invalid.map(\.line) == [3])
        #expect(list.invalid.first?.reason == "invalid URL 'nope': expected an absolute http:// or https:// URL")
    }

    @Test func aDirectoryAsTheListIsOneClearLine() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try FileManager.default.createDirectory(at: cli.directory.appendingPathComponent("lists"),
                                                withIntermediateDirectories: true)
        let run = await cli.run(["prefetch", "lists"])
        #expect(run.code == 1)
        #expect(run.err == "Error: cannot read URL list 'lists': is a directory\n")
    }

    // Bug 11, second half: a port out of range reached the client and came back as exit 1 "NSURLErrorDomain ...".
    @Test("bad URLs are usage errors naming the URL", arguments: [
        (["get", "http://127.0.0.1:99999/x"],
         "Error: invalid URL 'http://127.0.0.1:99999/x': port 99999 is out of range (1-65535) (see 'dlcache get --help')"),
        (["get", "http://127.0.0.1:0/x"],
         "Error: invalid URL 'http://127.0.0.1:0/x': port 0 is out of range (1-65535) (see 'dlcache get --help')"),
        (["get", "http://exa mple.com/"],
         "Error: invalid URL 'http://exa mple.com/': expected an absolute http:// or https:// URL (see 'dlcache get --help')"),
        (["info", "http://h:abc/"],
         "Error: invalid URL 'http://h:abc/': expected an absolute http:// or https:// URL (see 'dlcache info --help')"),
    ])
    func badURLs(_ args: [String], _ line: String) async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(args)
        #expect(run.code == 64)
        #expect(run.err == line + "\n")
    }

    @Test func aBadPortInAListNamesTheLine() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let skipped = await cli.run(["prefetch", "--json"], stdin: "http://127.0.0.1:99999/b\n")
        #expect(skipped.code == 1)
        #expect(skipped.err == "skipped line 1: invalid URL 'http://127.0.0.1:99999/b': port 99999 is out of range (1-65535)\n")
    }

    @Test("numeric options accept plain decimal numbers only", arguments: [
        "0x10", "inf", "nan", "1e3", "+5", "-0", ".5", "5.", "1.2.3", " 5", "５", "",
    ])
    func nonDecimalSecondsAreRejected(_ text: String) async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        for option in ["--expires-in", "--max-time"] {
            let run = await cli.run(["get", option, text, "http://127.0.0.1:1/x"])
            #expect(run.code == 64, "\(option) \(text)")
            #expect(run.err.hasPrefix("Error: invalid value '\(text)' for '\(option)'"), "\(run.err)")
        }
        let prefetch = await cli.run(["prefetch", "--concurrency", text, "-"], stdin: "")
        #expect(prefetch.code == 64)
        #expect(prefetch.err.hasPrefix("Error: invalid value '\(text)' for '--concurrency'"))
    }

    @Test func decimalNumbersStillWork() throws {
        let parsed = ParsedArguments(flags: [], values: ["expires-in": ["60"], "max-time": ["1.5"]], positionals: [])
        let options = try GetCommand.requestOptions(parsed)
        #expect(options.expiration == .seconds(60))
        #expect(options.timeout == 1.5)
        #expect(ParsedArguments.isDecimal("007", fraction: false))
        #expect(!ParsedArguments.isDecimal("0.5", fraction: false))
        #expect(ParsedArguments.isDecimal("0.5", fraction: true))
    }
}
