import Foundation
import Testing
@testable import CacheCLI
import CacheTestSupport

/// A binary body (a NUL byte in its first bytes) is refused on a terminal as curl refuses it, unless `-o -`
/// asks for it; text on a terminal and anything in a pipe is written as usual.
@Suite struct BinaryBodyOnATerminalTests {
    @Test(arguments: [[String](), ["-i"]])
    func aBinaryBodyIsRefusedOnATerminal(_ extra: [String]) async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let url = origin.url("/size/1000").absoluteString
        let run = await cli.run(["get"] + extra + [url], terminal: true)
        #expect(run.code == 23, "\(run.err)")
        #expect(run.err == "Error: " + BodySink.binaryRefusal + "\n")
        #expect(!run.out.contains("\u{0}"))
        let forced = await cli.run(["get", "-o", "-", url], terminal: true)
        #expect(forced.code == 0 && forced.out.contains("\u{0}"))
        let piped = await cli.run(["get", url])
        #expect(piped.code == 0 && piped.out.contains("\u{0}"))
    }

    @Test func textOnATerminalIsWritten() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/text", body: "plain text\n")
        let run = await cli.run(["get", origin.url("/text").absoluteString], terminal: true)
        #expect(run.code == 0 && run.out == "plain text\n")
    }
}
