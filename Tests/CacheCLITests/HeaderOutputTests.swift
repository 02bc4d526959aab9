import Foundation
import Testing
import CacheCLI
import CacheTestSupport

/// `-I/--head`, `-i/--include` and `-D/--dump-header`: the response head as an HTTP/1.1 header block.
@Suite struct HeaderOutputTests {
    /// Header fields the origin sets itself on every answer (Server, Date) vary; the block is compared
    /// without them.
    static func withoutVaryingFields(_ block: String) -> String {
        block.components(separatedBy: "\r\n")
            .filter { !$0.hasPrefix("Server: ") && !$0.hasPrefix("Date: ") && !$0.hasPrefix("Age: ") }
            .joined(separator: "\r\n")
    }

    static let golden = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCache-Control: max-age=600\r\nX-Tag: one\r\n"
        + "Content-Length: 5\r\n\r\n"

    @Test func includePrintsTheHeaderBlockThenTheBody() async throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/h", headers: [("Content-Type", "text/plain"), ("Cache-Control", "max-age=600"),
                                                         ("X-Tag", "one")], body: "hello")
        let run = await cli.run(["get", "-i", origin.url("/h").absoluteString])
        #expect(run.code == 0)
        #expect(Self.withoutVaryingFields(run.out) == Self.golden + "hello")
    }

    @Test func headSendsHEADAndIsAnsweredFromAFreshStoredGET() async throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/h", headers: [("Content-Type", "text/plain"), ("Cache-Control", "max-age=600"),
                                                         ("X-Tag", "one")], body: "hello")
        let url = origin.url("/h").absoluteString
        let head = await cli.run(["get", "-I", url])
        #expect(head.code == 0)
        #expect(Self.withoutVaryingFields(head.out) == Self.golden)
        #expect(try await origin.hits("/h").methods["HEAD"] == 1)
        #expect(await cli.run(["get", url]).code == 0)
        let fromCache = await cli.run(["get", "--head", url])
        #expect(Self.withoutVaryingFields(fromCache.out) == Self.golden)
        let hits = try await origin.hits("/h")
        #expect(hits.methods["HEAD"] == 1 && hits.methods["GET"] == 1, "\(hits)")
        #expect(await cli.run(["get", "-I", "-X", "POST", url]).code == 64)
    }

    @Test func dumpHeaderWritesTheBlockToAFileOrStdout() async throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/h", headers: [("Content-Type", "text/plain"), ("Cache-Control", "max-age=600"),
                                                         ("X-Tag", "one")], body: "hello")
        let url = origin.url("/h").absoluteString
        let file = cli.directory.appendingPathComponent("headers.txt")
        let run = await cli.run(["get", "-D", file.path, url])
        #expect(run.code == 0)
        #expect(run.out == "hello")
        #expect(Self.withoutVaryingFields(try String(contentsOf: file, encoding: .utf8)) == Self.golden)
        let toStdout = await cli.run(["get", "-D", "-", "-o", cli.directory.appendingPathComponent("body").path, url])
        #expect(Self.withoutVaryingFields(toStdout.out) == Self.golden)
        #expect(await cli.run(["get", "-D", "", url]).code == 64)
    }

    @Test func controlBytesFromTheOriginAreEscapedOnATerminalOnly() async throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        try await origin.configure(path: "/esc", headers: [("Cache-Control", "no-store"), ("X-Evil", "a\u{1b}[2Jb")],
                                   body: "x", reason: "OK\u{1b}]0;pwned\u{07}")
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let url = origin.url("/esc").absoluteString
        let terminal = await cli.run(["get", "-i", url], terminal: true)
        #expect(terminal.code == 0, "\(terminal.err)")
        #expect(!terminal.out.contains("\u{1b}"))
        #expect(terminal.out.contains("X-Evil: a\\x1b[2Jb\r\n"))
        #expect(terminal.out.hasPrefix("HTTP/1.1 200 OK\\x1b]0;pwned\\x07\r\n"))
        let piped = await cli.run(["get", "-i", url])
        #expect(piped.out.contains("X-Evil: a\u{1b}[2Jb\r\n"))
    }
}
