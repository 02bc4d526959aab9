import Foundation
import Testing
import HTTPCacheSemantics
import DownloadCache
@testable import CacheCLI

/// The driver's line formats without any network: request parsing, answer encoding, header forwarding, line
/// splitting, and the command's options.
@Suite struct DriverParsingTests {
    @Test func fullRequestLineKeepsHeaderOrderAndDuplicates() throws {
        let line = #"{"id": "a1", "method": "PURGE", "url": "http://127.0.0.1:8000/x?q=1", "#
            + #""headers": [["Accept", "text/html"], ["X-Dup", "1"], ["x-dup", "2"]], "body": "payload"}"#
        let request = try DriverRequest.parse(line)
        #expect(request.id == .string("a1"))
        #expect(request.method == "PURGE")
        #expect(request.url.absoluteString == "http://127.0.0.1:8000/x?q=1")
        #expect(request.headers.pairs == [["Accept", "text/html"], ["X-Dup", "1"], ["x-dup", "2"]])
        #expect(request.body == Data("payload".utf8))
        #expect(request.cacheRequest.method == "PURGE")
    }

    @Test func minimalRequestLineUsesDefaults() throws {
        let request = try DriverRequest.parse(#"{"id": 3, "url": "http://h/"}"#)
        #expect(request.id == .integer(3))
        #expect(request.method == "GET")
        #expect(request.headers.isEmpty)
        #expect(request.body == nil)
        #expect(try DriverRequest.parse(#"{"id": 1.5, "url": "http://h/", "body": null, "headers": null}"#).id == .number("1.5"))
    }

    @Test("malformed lines name the problem and keep the id when readable", arguments: [
        ("", nil, "not a JSON object"),
        ("[1, 2]", nil, "not a JSON object"),
        (#"{"id": 1, "url": "http://h/""#, nil, "not a JSON object"),
        (#"{"url": "http://h/"}"#, nil, "missing \"id\""),
        (#"{"id": true, "url": "http://h/"}"#, nil, "\"id\" must be a string or a number"),
        (#"{"id": [1], "url": "http://h/"}"#, nil, "\"id\" must be a string or a number"),
        (#"{"id": "x"}"#, DriverID.string("x"), "\"url\" must be a string"),
        (#"{"id": "x", "url": "http://bad host/"}"#, DriverID.string("x"), "invalid URL"),
        (#"{"id": 9, "url": "http://h/", "method": "GE T"}"#, DriverID.integer(9), "not an HTTP token"),
        (#"{"id": 9, "url": "http://h/", "method": 5}"#, DriverID.integer(9), "\"method\" must be a string"),
        (#"{"id": 9, "url": "http://h/", "headers": {"A": "b"}}"#, DriverID.integer(9), "\"headers\" must be an array"),
        (#"{"id": 9, "url": "http://h/", "headers": [["A"]]}"#, DriverID.integer(9), "pair of strings"),
        (#"{"id": 9, "url": "http://h/", "headers": [["A", 1]]}"#, DriverID.integer(9), "pair of strings"),
        (#"{"id": 9, "url": "http://h/", "headers": [["Bad Name", "v"]]}"#, DriverID.integer(9), "not an HTTP token"),
        (#"{"id": 9, "url": "http://h/", "headers": [["A", "x\r\nInjected: 1"]]}"#, DriverID.integer(9), "CR, LF or NUL"),
        (#"{"id": 9, "url": "http://h/", "body": 12}"#, DriverID.integer(9), "\"body\" must be a string or null"),
    ] as [(String, DriverID?, String)])
    func malformed(_ line: String, _ id: DriverID?, _ fragment: String) {
        do {
            let request = try DriverRequest.parse(line)
            Issue.record("parsed unexpectedly: \(request)")
        } catch {
            #expect(error.id == id)
            #expect(error.message.contains(fragment), "\(error.message)")
        }
    }

    @Test func responseLineHasTheContractFields() throws {
        let line = DriverResponse.response(id: .integer(4), status: 299, statusText: "Status 299",
                                           headers: [["A", "1"], ["A", "2"]], body: "line1\nline2/é").jsonLine
        #expect(!line.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["id", "status", "statusText", "headers", "body"])
        #expect(object["id"] as? Int == 4)
        #expect(object["status"] as? Int == 299)
        #expect(object["statusText"] as? String == "Status 299")
        #expect(object["headers"] as? [[String]] == [["A", "1"], ["A", "2"]])
        #expect(object["body"] as? String == "line1\nline2/é")
    }

    @Test("error lines always carry id, null when unknown", arguments: [
        (DriverID?.none, #"{"error":"bad","id":null}"#),
        (DriverID.string("s"), #"{"error":"bad","id":"s"}"#),
        (DriverID.integer(-12), #"{"error":"bad","id":-12}"#),
    ])
    func errorLine(_ id: DriverID?, _ expected: String) {
        #expect(DriverResponse.error(id: id, message: "bad").jsonLine == expected)
    }

    @Test func forwardedHeadersDropHopByHopAndConnectionNamedFields() {
        let headers = HTTPHeaders([
            ("Connection", "close, X-Private"), ("connection", "X-Other"), ("X-Private", "1"), ("X-Other", "2"),
            ("Keep-Alive", "timeout=5"), ("Transfer-Encoding", "chunked"), ("Upgrade", "h2c"), ("Set-Cookie", "a=1"),
            ("Set-Cookie", "b=2"), ("Age", "3"),
        ])
        #expect(DriverResponse.forwardedHeaders(headers).pairs == [["Set-Cookie", "a=1"], ["Set-Cookie", "b=2"], ["Age", "3"]])
    }

    @Test func splitterHandlesChunksCRLFAndAnUnterminatedLastLine() {
        var splitter = DriverLineSplitter()
        #expect(splitter.feed(Data("{\"a\"".utf8)) == [])
        #expect(splitter.feed(Data(":1}\r\n{\"b\":2}\n\n{\"c\"".utf8)) == ["{\"a\":1}", "{\"b\":2}", ""])
        #expect(splitter.feed(Data(":3}".utf8)) == [])
        #expect(splitter.finish() == "{\"c\":3}")
        #expect(splitter.finish() == nil)
        #expect(splitter.feed(Data([0x66, 0xFF, 0x0A])) == ["f\u{FFFD}"])
    }

    /// A line over the limit is never held: its bytes are dropped as they arrive, and it comes out as the marker
    /// the session answers with an error line; the lines around it are untouched.
    @Test func aLineOverTheLimitIsDroppedAndMarked() async throws {
        var splitter = DriverLineSplitter(limit: 10)
        let marker = String(decoding: DriverLineSplitter.oversizedLine, as: UTF8.self)
        #expect(splitter.feed(Data("short\n0123456".utf8)) == ["short"])
        #expect(splitter.feed(Data(String(repeating: "x", count: 30).utf8)) == [])
        #expect(splitter.feed(Data("yy\nnext\n0123456789ABC\n".utf8)) == [marker, "next", marker])
        #expect(splitter.feed(Data("0123456789".utf8)) == [])
        #expect(splitter.feed(Data("Z".utf8)) == [])
        #expect(splitter.finish() == marker)
        #expect(splitter.finish() == nil)
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let session = DriverSession(cache: try DownloadCache(configuration: .init(directory: cli.directory)),
                                    write: { (_: Data) in })
        let answer = await session.answer(bytes: DriverLineSplitter.oversizedLine)
        #expect(answer == .error(id: nil, message: "malformed line: longer than \(DriverLineSplitter.maxLineBytes) bytes (not read)"))
    }

    @Test("blank lines are recognised", arguments: [("", true), ("  \t\r", true), (" x ", false), ("{}", false)])
    func blank(_ line: String, _ isBlank: Bool) {
        #expect(DriverSession.isBlank(line) == isBlank)
    }

    @Test("--mode values", arguments: [(["--mode", "shared"], "shared"), (["--mode=private"], "private"), ([], "private")])
    func modeOption(_ args: [String], _ expected: String) throws {
        let parsed = try ArgumentParser.parse(args, options: DriverCommand.options, positionals: DriverCommand.arguments)
        #expect(try DriverCommand.mode(parsed) == (expected == "shared" ? .shared : .private))
    }

    @Test func badModeExits64WithoutReadingStdin() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["driver", "--mode", "public"])
        #expect(run.code == 64)
        #expect(run.err == "Error: invalid value 'public' for '--mode': expected private or shared (see 'dlcache driver --help')\n")
        #expect(run.out.isEmpty)
    }

    @Test func inlineBodyLimitTakesASizeLikeEverySizeOption() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["driver", "--inline-body-limit", "1X"])
        #expect(run.code == 64)
        #expect(run.err.contains("invalid value '1X' for '--inline-body-limit': expected a byte count such as 65536, 512K"), "\(run.err)")
        let negative = await cli.run(["driver", "--inline-body-limit", "-1"])
        #expect(negative.code == 64, "\(negative.err)")
        #expect(try StorageLimitOptions.size("512K", option: "inline-body-limit") == 512 << 10)
    }

    @Test func helpDescribesTheLineFormats() async throws {
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        let run = await cli.run(["driver", "--help"])
        #expect(run.code == 0)
        #expect(run.out.hasPrefix("OVERVIEW: \(DriverCommand.abstract)\n"))
        #expect(run.out.contains("USAGE: dlcache driver ["))
        #expect(run.out.contains("--max-in-flight <n>"))
        #expect(run.out.contains("--inline-body-limit <bytes>"))
        #expect(run.out.contains("--no-stale-when-disconnected"))
        #expect(run.out.split(whereSeparator: \.isWhitespace).joined(separator: " ").contains("A \"Range\" header with one byte range"))
        #expect(run.out.contains("--redis <url>"))
        #expect(run.out.contains("U+FFFD"))
        #expect(run.out.contains("bodyBase64"))
        #expect(run.out.contains(#""bodyFile": "<path>""#))
        let words = run.out.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
        #expect(words.contains("background revalidations"))
    }
}
