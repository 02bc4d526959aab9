import Foundation
import Synchronization
import Testing
@testable import CacheCLI
import CacheTestSupport

/// `get`'s byte bar follows stderr, as curl's progress meter does: drawn when stderr is a terminal and the body
/// is large, whether stdout is a pipe or a file, in the streaming path and in the buffered one (`-i`, `-D`,
/// `--fail`, `--json`); never under `-s`/`--no-progress-meter`, never when stderr is not a terminal, and never
/// when the body itself goes to the terminal (curl leaves its meter out then, so the two never mix).
@Suite struct ProgressBarFollowsStderrTests {
    /// Bytes written to one stream.
    final class Buffer: Sendable {
        let data = Mutex(Data())
        func append(_ more: Data) { data.withLock { $0.append(more) } }
        var bytes: Data { data.withLock { $0 } }
    }

    /// A console whose stdout and stderr claim to be terminals as given, recording what is written.
    struct SplitConsole {
        let out = Buffer()
        let err = Buffer()
        let console: Console
        init(stdoutIsTerminal: Bool, stderrIsTerminal: Bool) {
            let out = self.out, err = self.err
            console = Console(writeOut: { out.append($0) }, writeErr: { err.append($0) },
                              stdoutIsTerminal: stdoutIsTerminal, stderrIsTerminal: stderrIsTerminal)
        }
        var stderr: String { String(decoding: err.bytes, as: UTF8.self) }
        var stdoutCount: Int { out.bytes.count }
    }

    @Test func theDecisionLooksAtStderrAndWhereTheBodyGoes() {
        func console(out: Bool, err: Bool) -> Console { SplitConsole(stdoutIsTerminal: out, stderrIsTerminal: err).console }
        #expect(ByteProgressBar.isShown(allowed: true, console: console(out: false, err: true), bodyToStdout: true))
        #expect(ByteProgressBar.isShown(allowed: true, console: console(out: true, err: true), bodyToStdout: false),
                "-o FILE with stdout a terminal")
        #expect(!ByteProgressBar.isShown(allowed: true, console: console(out: true, err: true), bodyToStdout: true),
                "the body goes to the terminal: no meter mixed into it, as curl")
        #expect(!ByteProgressBar.isShown(allowed: true, console: console(out: true, err: false), bodyToStdout: false))
        #expect(!ByteProgressBar.isShown(allowed: true, console: console(out: false, err: false), bodyToStdout: true))
        #expect(!ByteProgressBar.isShown(allowed: false, console: console(out: false, err: true), bodyToStdout: true))
        #expect(ByteProgressBar.isLarge(received: 0, expected: (4 << 20) + 1))
        #expect(ByteProgressBar.isLarge(received: (4 << 20) + 1, expected: nil))
        #expect(!ByteProgressBar.isLarge(received: 1000, expected: 4 << 20))
    }

    static func run(_ args: [String], stdoutIsTerminal: Bool, stderrIsTerminal: Bool, cli: CLIHarness) async -> (Int32, SplitConsole) {
        let split = SplitConsole(stdoutIsTerminal: stdoutIsTerminal, stderrIsTerminal: stderrIsTerminal)
        let environment = CommandEnvironment(console: split.console,
                                             variables: ["DLCACHE_DIR": cli.directory.path, "HOME": "/nonexistent"],
                                             currentDirectory: cli.directory)
        let code = await CommandLineTool.run(arguments: ["dlcache"] + args, environment: environment)
        return (code, split)
    }

    @Test(arguments: [[String](), ["-i"], ["--fail"]])
    func aLargeBodyToAPipeDrawsTheBarWhenStderrIsATerminal(options: [String]) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let url = origin.url("/size/5000000?cc=no-store").absoluteString
        let (code, shown) = await Self.run(["get"] + options + [url], stdoutIsTerminal: false, stderrIsTerminal: true, cli: cli)
        #expect(code == 0)
        #expect(shown.stdoutCount >= 5_000_000)
        #expect(shown.stderr.contains("\r[########################]  5.0 MB / 5.0 MB"), "\(options) \(shown.stderr.suffix(300))")
        #expect(shown.stderr.hasSuffix("\n"))
        let (_, quiet) = await Self.run(["get", "--no-progress-meter"] + options + [url], stdoutIsTerminal: false,
                                        stderrIsTerminal: true, cli: cli)
        #expect(quiet.stderr.isEmpty, "\(quiet.stderr)")
        let (_, logged) = await Self.run(["get", "-o", "-"] + options + [url], stdoutIsTerminal: true, stderrIsTerminal: false, cli: cli)
        #expect(logged.stderr.isEmpty, "\(logged.stderr)")
        let (_, onScreen) = await Self.run(["get", "-o", "-"] + options + [url], stdoutIsTerminal: true, stderrIsTerminal: true,
                                           cli: cli)
        #expect(!onScreen.stderr.contains("["), "the body goes to the terminal: \(onScreen.stderr.suffix(200))")
        let (_, small) = await Self.run(["get"] + options + [origin.url("/size/1000").absoluteString],
                                        stdoutIsTerminal: false, stderrIsTerminal: true, cli: cli)
        #expect(small.stderr.isEmpty, "\(small.stderr)")
    }
}
