import Foundation
import Testing
import CacheTestSupport
@testable import CacheCLI

/// Control bytes an origin puts in its header fields never reach the terminal raw (issue 10 item 15): `info`
/// and `get -v` print them escaped, `--json` and the driver carry them as JSON escapes.
@Suite(.serialized) struct OriginControlBytesTests {
    /// ESC sequences (retitle the window, colour), BEL, backspace, a C1 CSI (U+009B) and an invalid UTF-8 byte
    /// (0xFF, which the transport reads as Latin-1). A bare CR is not among them: the transport refuses such a
    /// response outright (BareCarriageReturnInResponseTests), so it never reaches `info`.
    static let hostile = "\u{1B}]0;pwned\u{07}\u{1B}[8mhidden\u{08}\u{08}over\u{9B}31m\u{FF}end"

    /// Whether `data` holds a raw C0 control other than LF and TAB, DEL, or a C1 control (C2 80–9F).
    static func rawControls(_ data: Data) -> [UInt8] {
        let bytes = [UInt8](data)
        var found: [UInt8] = []
        for (i, byte) in bytes.enumerated() {
            if (byte < 0x20 && byte != 0x0A && byte != 0x09) || byte == 0x7F { found.append(byte) }
            if byte == 0xC2, i + 1 < bytes.count, (0x80...0x9F).contains(bytes[i + 1]) { found.append(bytes[i + 1]) }
        }
        return found
    }

    @Test func infoAndGetVerbosePrintControlBytesEscaped() async throws {
        let origin = try await OriginServer.start()
        let cli = try CLIHarness()
        defer { origin.stop(); cli.cleanUp() }
        try await origin.configure(path: "/evil", headers: [("Cache-Control", "max-age=600"), ("X-Evil", Self.hostile)],
                                   body: "x", reason: "OK\u{1B}[2J")
        let url = origin.url("/evil").absoluteString
        let get = await cli.run(["get", "-v", "-o", "/dev/null", url])
        #expect(get.code == 0, "\(get.err)")

        let text = await cli.run(["info", url])
        #expect(text.code == 0)
        #expect(Self.rawControls(Data(text.out.utf8)) == [], "raw control bytes in: \(text.out.debugDescription)")
        #expect(text.out.contains(#"X-Evil: \x1b]0;pwned\x07\x1b[8mhidden\x08\x08over\u{9b}31m"#), "\(text.out.debugDescription)")
        #expect(text.out.contains(#"status:   200 OK\x1b[2J"#) || text.out.contains(#"200 OK\x1b[2J"#))

        let json = await cli.run(["info", "--json", url])
        #expect(Self.rawControls(Data(json.out.utf8)) == [], "raw control bytes in: \(json.out.debugDescription)")
        let entries = try #require(try json.json() as? [[String: Any]])
        let headers = try #require(entries.first?["headers"] as? [[String]])
        let evil = try #require(headers.first { $0.first == "X-Evil" })
        #expect(evil.last?.hasPrefix("\u{1B}]0;pwned\u{07}") == true, "\(evil)")
        #expect(evil.last?.contains("\u{9B}31m") == true)
    }

    @Test func terminalEscapingKeepsOrdinaryTextAndEscapesControls() {
        #expect(TerminalText.escaped("max-age=60, é 中") == "max-age=60, é 中")
        #expect(TerminalText.escaped("a\tb") == "a\tb")
        #expect(TerminalText.escaped("a\u{1B}b\u{7}\u{8}\r\n\u{7F}") == #"a\x1bb\x07\x08\r\n\x7f"#)
        #expect(TerminalText.escaped("\u{85}\u{9B}\u{202E}\u{2028}") == #"\u{85}\u{9b}\u{202e}\u{2028}"#)
    }

    @Test func jsonOutputEscapesDELAndC1Controls() throws {
        let line = try JSONOutput.line(["v": "a\u{7F}b\u{9B}c\u{2028}d\u{1B}é"])
        #expect(Self.rawControls(Data(line.utf8)) == [])
        #expect(!line.contains("\u{2028}"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object["v"] == "a\u{7F}b\u{9B}c\u{2028}d\u{1B}é")
    }
}
