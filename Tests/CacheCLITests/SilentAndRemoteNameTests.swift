import Foundation
import Testing
import CacheCLI
import CacheTestSupport

/// curl spellings scripts use: `-s` hides the progress bar, warnings and the error line (`-S` brings the error
/// back), `--no-progress-meter` hides the bar only, `-O` names the output after the URL's last segment (never a
/// name that leaves the current directory, never through a symbolic link), `-C -` is accepted.
@Suite struct SilentAndRemoteNameTests {
    static let bigSize = 5 << 20

    @Test func silentHidesTheErrorLineAndShowErrorBringsItBack() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let silent = await cli.run(["get", "-s", "--no-read", "http://127.0.0.1:9/x"])
        #expect(silent.code == 7)
        #expect(silent.err.isEmpty, "\(silent.err)")
        let shown = await cli.run(["get", "-sS", "--no-read", "http://127.0.0.1:9/x"])
        #expect(shown.code == 7)
        #expect(shown.err.hasPrefix("Error: network error: cannot connect"), "\(shown.err)")
        let json = await cli.run(["get", "-s", "--json", "--no-read", "http://127.0.0.1:9/x"])
        #expect(json.code == 7 && json.err.isEmpty)
        let error = try #require(try json.object()["error"] as? [String: Any])
        #expect(error["kind"] as? String == "connect")
        // A bad command line is always said, even with -s.
        let usage = await cli.run(["get", "-s", "--max-redirs", "x", "http://127.0.0.1:9/x"])
        #expect(usage.code == 64 && usage.err.hasPrefix("Error: invalid value 'x'"))
    }

    @Test func silentHidesWarningsButNotVerboseLines() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/a", headers: [("Cache-Control", "max-age=600")], body: "body a")
        let url = origin.url("/a").absoluteString
        let silent = await cli.run(["get", "-s", "-k", url])
        #expect(silent.code == 0 && silent.out == "body a" && silent.err.isEmpty, "\(silent.err)")
        let loud = await cli.run(["get", "-k", url])
        #expect(loud.err.hasPrefix("Warning: --insecure"))
        let verbose = await cli.run(["get", "-s", "-v", url])
        #expect(verbose.code == 0 && verbose.err.contains("Cache-Status: "), "\(verbose.err)")
    }

    @Test(arguments: [["-s"], ["--no-progress-meter"], ["--silent"]])
    func noProgressBarOnATerminal(_ flags: [String]) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/big", headers: [("Cache-Control", "max-age=600")], size: Self.bigSize)
        let output = cli.directory.appendingPathComponent("big.bin")
        let run = await cli.run(["get"] + flags + ["-o", output.path, origin.url("/big").absoluteString], terminal: true)
        #expect(run.code == 0)
        #expect(try Data(contentsOf: output).count == Self.bigSize)
        #expect(run.err.isEmpty, "\(run.err)")
        #expect(try await origin.hits("/big").total == 1)
    }

    @Test func remoteNameWritesTheLastSegmentInTheCurrentDirectory() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/files/report.txt", headers: [("Cache-Control", "max-age=600")], body: "the report")
        let run = await cli.run(["get", "-O", origin.url("/files/report.txt?v=2").absoluteString])
        #expect(run.code == 0 && run.out.isEmpty, "\(run.code) \(run.err)")
        let written = cli.directory.appendingPathComponent("report.txt")
        #expect(try String(contentsOf: written, encoding: .utf8) == "the report")
        // A percent-escape stays as written (as curl): "%2F" never becomes a directory separator.
        try await origin.configure(path: "/a%2Fb", headers: [("Cache-Control", "max-age=600")], body: "escaped")
        let escaped = await cli.run(["get", "--remote-name", origin.url("/a%2Fb").absoluteString])
        #expect(escaped.code == 0, "\(escaped.err)")
        #expect(try String(contentsOf: cli.directory.appendingPathComponent("a%2Fb"), encoding: .utf8) == "escaped")
    }

    @Test(arguments: ["/dir/", "/", "/x/..", "/x/."])
    func remoteNameRefusesANameThatIsNoFileName(_ path: String) async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let before = try FileManager.default.contentsOfDirectory(atPath: cli.directory.path)
        let run = await cli.run(["get", "-O", "http://127.0.0.1:9" + path])
        #expect(run.code == 64, "\(run.err)")
        #expect(run.err.contains("-O/--remote-name"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: cli.directory.path) == before)
    }

    @Test func remoteNameNeverWritesThroughASymbolicLink() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/victim", headers: [("Cache-Control", "max-age=600")], body: "origin's bytes")
        let target = cli.directory.appendingPathComponent("elsewhere.txt")
        try Data("keep me".utf8).write(to: target)
        try FileManager.default.createSymbolicLink(atPath: cli.directory.appendingPathComponent("victim").path,
                                                   withDestinationPath: target.path)
        let run = await cli.run(["get", "-O", origin.url("/victim").absoluteString])
        #expect(run.code == 23, "\(run.err)")
        #expect(run.err.contains("symbolic link"))
        #expect(try String(contentsOf: target, encoding: .utf8) == "keep me")
        // The same with the buffered path (-i needs the head first).
        let buffered = await cli.run(["get", "-O", "-i", origin.url("/victim").absoluteString])
        #expect(buffered.code == 23)
        #expect(try String(contentsOf: target, encoding: .utf8) == "keep me")
        // -o names its file on purpose: it follows links as curl's does.
        let named = await cli.run(["get", "-o", cli.directory.appendingPathComponent("victim").path,
                                   origin.url("/victim").absoluteString])
        #expect(named.code == 0)
        #expect(try String(contentsOf: target, encoding: .utf8) == "origin's bytes")
    }

    @Test func remoteNameAndOutputTogetherIsAUsageError() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["get", "-O", "-o", "x", "http://127.0.0.1:9/a"])
        #expect(run.code == 64 && run.err.contains("give one"))
    }

    @Test func continueAtDashIsAcceptedAndAnOffsetIsNot() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/c", headers: [("Cache-Control", "max-age=600")], body: "continued")
        let run = await cli.run(["get", "-C", "-", origin.url("/c").absoluteString])
        #expect(run.code == 0 && run.out == "continued")
        let offset = await cli.run(["get", "-C", "100", origin.url("/c").absoluteString])
        #expect(offset.code == 64 && offset.err.contains("only '-C -'"))
    }
}
