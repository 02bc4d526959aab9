import Foundation
import Testing
import CacheTestSupport
@testable import CacheCLI

/// A prefetch list is split at LF, CRLF and CR only: no other character Unicode or Swift calls a line break (NEL
/// U+0085, U+2028, U+2029, VT, FF) makes two URLs of one line. A line that is not UTF-8 or holds a control
/// character is an invalid line, reported and not fetched.
@Suite struct URLListSplitsOnlyAtLineEndsTests {
    static func parse(_ bytes: [UInt8]) -> PrefetchCommand.URLList { PrefetchCommand.parseURLList(Data(bytes)) }

    @Test(arguments: [
        ("\u{85}", "U+0085"), ("\u{2028}", "U+2028"), ("\u{2029}", "U+2029"), ("\u{0B}", "U+000B"),
        ("\u{0C}", "U+000C"), ("\u{00}", "U+0000"), ("\u{1B}", "U+001B"), ("\u{7F}", "U+007F"), ("\u{9B}", "U+009B"),
    ])
    func aLineBreakOtherThanLFOrCRIsAControlCharacterInTheLine(separator: String, name: String) {
        let list = PrefetchCommand.parseURLList("http://h/ok\nhttp://h/a\(separator)http://evil/b\nhttp://h/c\n")
        #expect(list.urls.map(\.absoluteString) == ["http://h/ok", "http://h/c"])
        #expect(list.invalid.count == 1)
        #expect(list.invalid.first?.line == 2)
        #expect(list.invalid.first?.reason == "invalid line: control character \(name)")
    }

    @Test func lineEndsAreLFCRLFAndCR() {
        let list = Self.parse(Array("http://h/1\r\nhttp://h/2\rhttp://h/3\nhttp://h/4\r\r\nhttp://h/6".utf8))
        #expect(list.urls.map(\.path) == ["/1", "/2", "/3", "/4", "/6"])
        #expect(list.invalid.isEmpty)
        // Tab stays white space (a comment after the URL), not a control character.
        #expect(PrefetchCommand.parseURLList("http://h/t\t# comment\n").urls.map(\.path) == ["/t"])
    }

    @Test func aLineThatIsNotUTF8IsInvalidAndTheOthersStay() {
        let list = Self.parse(Array("http://h/1\n".utf8) + [0x68, 0x74, 0x74, 0x70, 0x3A, 0x2F, 0x2F, 0x68, 0x2F, 0xFF, 0xFE]
                              + Array("\nhttp://h/3\n".utf8) + [0xC0, 0xAF] + Array("\n".utf8))
        #expect(list.urls.map(\.path) == ["/1", "/3"])
        #expect(list.invalid.map(\.line) == [2, 4])
        #expect(list.invalid.allSatisfy { $0.reason == "invalid line: not UTF-8 text" })
    }

    @Test func theByteOrderMarkOnlyStartsTheList() {
        let list = PrefetchCommand.parseURLList("\u{FEFF}http://h/1\n\u{FEFF}http://h/2\n")
        #expect(list.urls.map(\.path) == ["/1"])
        #expect(list.invalid.map(\.line) == [2])
    }

    /// Through the command: the line with a NEL is reported and nothing of it reaches any origin.
    @Test func prefetchSkipsTheLineAndFetchesTheRest() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let good = origin.url("/size/10").absoluteString
        let smuggled = origin.url("/smuggled").absoluteString
        let run = await cli.run(["prefetch"], stdin: "\(good)\n\(good)?x\u{85}\(smuggled)\n")
        #expect(run.code == 1)
        #expect(run.err.contains("skipped line 2: invalid line: control character U+0085"), "\(run.err)")
        #expect(try await origin.hits("/size/10").total == 1)
        #expect(try await origin.hits("/smuggled").total == 0)
    }
}
