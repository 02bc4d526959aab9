import Foundation
import Testing
@testable import CacheCLI
import CacheTestSupport

/// The driver's byte-level JSON answer encoder and request parser, checked against Foundation's JSON decoder
/// and Swift's own UTF-8 decoding (`String(decoding:as:)`, U+FFFD per maximal invalid subpart).
struct DriverAnswerEncodingTests {
    struct Wire: Decodable {
        var body: String
        var bodyBase64: String?
    }

    /// Encodes `bytes` as an answer body and decodes the line with Foundation.
    static func roundTrip(_ bytes: [UInt8]) throws -> (line: [UInt8], wire: Wire) {
        let line = DriverResponse.response(id: .integer(1), status: 200, statusText: "OK", headers: [],
                                           body: .bytes(Data(bytes))).jsonBytes()
        let wire = try JSONDecoder().decode(Wire.self, from: Data(line))
        return (line, wire)
    }

    /// Expects the body to decode as Swift decodes the bytes, base64 to be present exactly when they are not
    /// valid UTF-8 and to carry them exactly, and the line to hold no raw control character.
    static func check(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (line, wire) = try roundTrip(bytes)
        let valid = String(validating: bytes, as: UTF8.self) != nil
        #expect(wire.body == String(decoding: bytes, as: UTF8.self), "bytes \(bytes.prefix(16))", sourceLocation: sourceLocation)
        if valid {
            #expect(wire.bodyBase64 == nil, sourceLocation: sourceLocation)
        } else {
            #expect(wire.bodyBase64.flatMap { Data(base64Encoded: $0) } == Data(bytes), sourceLocation: sourceLocation)
        }
        #expect(!containsRawControl(line), "raw control in \(line.prefix(40))", sourceLocation: sourceLocation)
    }

    /// Whether `line` holds a C0 control, DEL, a C1 control (C2 80–9F) or U+2028/2029 raw.
    static func containsRawControl(_ line: [UInt8]) -> Bool {
        for (i, byte) in line.enumerated() {
            if byte < 0x20 || byte == 0x7F { return true }
            if byte == 0xC2, i + 1 < line.count, (0x80...0x9F).contains(line[i + 1]) { return true }
            if byte == 0xE2, i + 2 < line.count, line[i + 1] == 0x80, line[i + 2] == 0xA8 || line[i + 2] == 0xA9 { return true }
        }
        return false
    }

    @Test func everySingleByteAloneAndInsideText() throws {
        for byte in 0...255 {
            try Self.check([UInt8(byte)])
            try Self.check(Array("abcdefgh".utf8) + [UInt8(byte)] + Array("ijklmnopq".utf8))
        }
    }

    @Test func everyByteValueInOneBody() throws {
        try Self.check((0...255).map(UInt8.init))
        try Self.check((0...255).reversed().map(UInt8.init))
    }

    @Test("invalid UTF-8: overlongs, surrogates, beyond U+10FFFF, truncated, stray continuations", arguments: [
        [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF], [0xF0, 0x80, 0x80, 0x80],
        [0xF0, 0x8F, 0xBF, 0xBF], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xED, 0xA0, 0x80, 0xED, 0xB0, 0x80],
        [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xFE], [0xFF],
        [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xF0, 0x9F], [0x80], [0xBF, 0x80, 0x41], [0xC2], [0xC2, 0x41],
        [0xE2, 0x41, 0x82, 0xAC], [0x61, 0xF0, 0x9F, 0x98, 0x80, 0xF0, 0x9F, 0x98, 0x62],
    ] as [[UInt8]])
    func invalidSequences(_ bytes: [UInt8]) throws {
        try Self.check(bytes)
        try Self.check(Array("0123456789".utf8) + bytes + Array("0123456789".utf8))
    }

    @Test func validMultibyteTextIsCopiedExactly() throws {
        let text = "é ü 中文 😀 \u{10FFFF} \u{FFFD} \u{E000} \u{A0}"
        let (line, wire) = try Self.roundTrip(Array(text.utf8))
        #expect(wire.body == text)
        #expect(wire.bodyBase64 == nil)
        // Multibyte characters that are not controls are copied raw, not escaped.
        #expect(String(decoding: line, as: UTF8.self).contains("中文 😀"))
    }

    @Test func lineSeparatorsAndC1ControlsAreEscaped() throws {
        let text = "a\u{2028}b\u{2029}c\u{85}d\u{9B}e\u{7F}f\u{1B}g"
        let (line, wire) = try Self.roundTrip(Array(text.utf8))
        #expect(wire.body == text)
        let raw = String(decoding: line, as: UTF8.self)
        for escape in [#"\u2028"#, #"\u2029"#, #"\u0085"#, #"\u009b"#, #"\u007f"#, #"\u001b"#] {
            #expect(raw.contains(escape), "\(escape) in \(raw)")
        }
    }

    @Test func everySpecialByteAtEveryPositionOfShortBodies() throws {
        // Exercises the eight-bytes-at-a-time scan: a byte needing an escape at any offset is never skipped.
        for special: [UInt8] in [[0x22], [0x5C], [0x0A], [0x00], [0x7F], [0xC2, 0x9B], [0xFF], [0xE2, 0x80, 0xA8], [0xC3, 0xA9]] {
            for length in 0...24 {
                for position in 0...length {
                    var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: length)
                    bytes.insert(contentsOf: special, at: position)
                    try Self.check(bytes)
                }
            }
        }
    }

    @Test func longRuns() throws {
        try Self.check([UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20))
        var quoted = [UInt8](repeating: UInt8(ascii: "b"), count: 1 << 20)
        for i in stride(from: 0, to: quoted.count, by: 997) { quoted[i] = UInt8(ascii: "\"") }
        try Self.check(quoted)
        try Self.check(Array(String(repeating: "é中😀", count: 50_000).utf8))
    }

    @Test func sequencesAndEscapesAcrossTheEncodersBlockBoundaries() throws {
        // The encoder works through its input in blocks of a few KiB: a sequence or escape that straddles a block
        // end, and bodies where every byte expands six-fold, come out exactly as anywhere else.
        for special: [UInt8] in [[0x22], [0x01], [0xC2, 0x9B], [0xE2, 0x80, 0xA9], [0xF0, 0x9F, 0x98, 0x80],
                                 [0xF0, 0x9F, 0x98], [0xE2, 0x82], [0xFF]] {
            for position in stride(from: 4_086, through: 4_100, by: 1) {
                var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: 9_000)
                bytes.insert(contentsOf: special, at: position)
                bytes.insert(contentsOf: special, at: position + 4_096)
                try Self.check(bytes)
            }
        }
        try Self.check([UInt8](repeating: 0x01, count: 10_000))
        try Self.check(Array(repeating: [0xC2, 0x85] as [UInt8], count: 5_000).flatMap { $0 })
        try Self.check([UInt8](repeating: 0xFF, count: 9_999))
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for round in 0..<4 {
            let bytes = (0..<(12_000 + round * 1_001)).map { _ -> UInt8 in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: state >> 56) | (round % 2 == 0 ? 0 : 0x80)
            }
            try Self.check(bytes)
        }
    }

    @Test func randomBytes() throws {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for round in 0..<40 {
            var bytes: [UInt8] = []
            for _ in 0..<(round * 97 + 1) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                // Bias towards bytes that form (and break) multibyte sequences.
                let value = UInt8(truncatingIfNeeded: state >> 56)
                bytes.append(round % 2 == 0 ? value : (value | 0x80))
            }
            try Self.check(bytes)
        }
    }

    @Test func base64MatchesFoundation() {
        for length in 0...20 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 200) }
            var out: [UInt8] = []
            bytes.withUnsafeBufferPointer { JSONLineEncoder.appendBase64($0, to: &out) }
            #expect(String(decoding: out, as: UTF8.self) == Data(bytes).base64EncodedString())
        }
    }

    @Test func headersStatusTextAndIdsEscapeControls() throws {
        let line = DriverResponse.response(id: .string("i\u{1B}d"), status: 200, statusText: "O\u{9B}K",
                                           headers: [["X-A", "v\u{7}\r\u{8}\u{2028}é"]], body: "").jsonBytes()
        #expect(!Self.containsRawControl(line))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
        #expect(object["id"] as? String == "i\u{1B}d")
        #expect(object["statusText"] as? String == "O\u{9B}K")
        #expect(object["headers"] as? [[String]] == [["X-A", "v\u{7}\r\u{8}\u{2028}é"]])
    }

    @Test func bodyFileAnswerHasThePathAndNoBody() throws {
        let line = DriverResponse.response(id: .integer(2), status: 200, statusText: "OK", headers: [],
                                           body: .file(path: "/tmp/x\"y")).jsonLine
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["id", "status", "statusText", "headers", "bodyFile"])
        #expect(object["bodyFile"] as? String == "/tmp/x\"y")
    }

    /// Strings and bodies decode as JSONDecoder decodes them; a string id is the string JSONDecoder reads, a number
    /// id keeps its text (``numberIDsAreEchoedExactlyAsWritten``).
    @Test("request lines parse as JSONDecoder reads them", arguments: [
        #"{"id": "a\u00e9\ud83d\ude00\n\t\"\\\/", "url": "http://h/"}"#,
        #"  {"id":-0,"url":"http://h/"}  "#,
        #"{"id": 1e2, "url": "http://h/"}"#,
        #"{"id": 1.0, "url": "http://h/"}"#,
        #"{"id": -12.5e-1, "url": "http://h/"}"#,
        #"{"id": 9223372036854775807, "url": "http://h/"}"#,
        #"{"id": 92233720368547758070, "url": "http://h/"}"#,
        #"{"id": "x", "url": "http://h/", "headers": [["A", "b\u0041"]], "body": "é", "extra": {"n": [true, false, null]}}"#,
    ])
    func parsesLikeJSONDecoder(_ line: String) throws {
        let request = try DriverRequest.parse(line)
        let reference = try JSONDecoder().decode([String: DriverJSONValue].self, from: Data(line.utf8))
        if case .string? = reference["id"] { #expect(reference["id"]?.driverID == request.id) }
        if case .string(let body)? = reference["body"] { #expect(request.body == Data(body.utf8)) }
    }

    /// A number id comes back in the answer exactly as written: never rounded through a `Double` (an id beyond 64
    /// bits), never rewritten (`1e2`, `1.0`, `-0`); a plain 64-bit integer is an integer.
    @Test(arguments: ["-0", "1e2", "1.0", "1.50", "-12.5e-1", "9223372036854775807", "9223372036854775808",
                      "92233720368547758070", "18446744073709551616", "123456789012345678901234567890"])
    func numberIDsAreEchoedExactlyAsWritten(_ text: String) throws {
        let request = try DriverRequest.parse(#"{"id": "# + text + #", "url": "http://h/"}"#)
        #expect(request.id.description == text)
        if let plain = Int64(text), String(plain) == text { #expect(request.id == .integer(plain)) }
        let answer = DriverResponse.response(id: request.id, status: 200, statusText: "OK", headers: [],
                                             body: .bytes(Data())).jsonLine
        #expect(answer.contains(#""id":"# + text + ","), "\(answer)")
        #expect(try JSONSerialization.jsonObject(with: Data(answer.utf8)) is [String: Any])
        let error = DriverResponse.error(id: request.id, message: "x").jsonLine
        #expect(error.contains(#""id":"# + text), "\(error)")
    }

    @Test("malformed JSON is refused", arguments: [
        #"{"id": 1, "url": "http://h/"} x"#, #"{"id": 01, "url": "http://h/"}"#, #"{"id": "a\qb", "url": "h"}"#,
        "{\"id\": \"a\u{1}b\", \"url\": \"h\"}", #"{"id": "\ud800", "url": "h"}"#, #"{"id": "\u12", "url": "h"}"#,
        #"{"id": 1,}"#, #"{"id" 1}"#, #"["id"]"#, #"{"id": tru}"#, #"{"id": 1."#, #"{"id": -}"#, "",
        String(repeating: "[", count: 100_000),
        "{\"a\":" + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}",
    ])
    func refusesMalformed(_ line: String) {
        #expect(throws: DriverLineError.self) { try DriverRequest.parse(line) }
    }

    /// RFC 8259 §8.1: a request line is UTF-8; an id (or URL, header) with other bytes would be echoed changed,
    /// so the line is refused, with or without escapes in the string.
    @Test(arguments: [#"{"id": "a"#, #"{"id": "\n a"#])
    func invalidUTF8InsideARequestStringIsRefused(prefix: String) throws {
        let bytes: [UInt8] = Array(prefix.utf8) + [0xFF] + Array(#"b", "url": "http://h/"}"#.utf8)
        #expect(throws: DriverLineError.self) { try bytes.withUnsafeBytes { try DriverRequest.parse(bytes: $0) } }
    }

    /// Numbers a 64-bit integer cannot hold — and ones a `Double` cannot either — are ids echoed as written.
    @Test func numberIDsBeyondEveryBinaryTypeAreKeptAsWritten() throws {
        let digits = "1" + String(repeating: "0", count: 100_000)
        for text in [digits, "1e400", "-1.5E-400"] {
            let request = try DriverRequest.parse(#"{"id": \#(text), "url": "http://h/"}"#)
            #expect(request.id == .number(text))
        }
    }

    @Test func bodyFileFlagIsParsed() throws {
        #expect(try DriverRequest.parse(#"{"id": 1, "url": "http://h/", "bodyFile": true}"#).wantsBodyFile)
        #expect(try !DriverRequest.parse(#"{"id": 1, "url": "http://h/"}"#).wantsBodyFile)
        #expect(throws: DriverLineError.self) { try DriverRequest.parse(#"{"id": 1, "url": "http://h/", "bodyFile": "yes"}"#) }
    }

    /// A body that is not valid UTF-8 keeps `body` (lossy text) and adds `bodyBase64` with the exact
    /// bytes; a UTF-8 body has no `bodyBase64`.
    @Test func binaryBodyCarriesExactBytesInBase64() async throws {
        try await withDriver { h in
        try await h.origin.configure(path: "/text", body: "héllo ✓")
        h.send(id: "bin", path: "/size/256")
        h.send(id: "text", path: "/text")
        let answers = try await h.waitForAnswers(2)
        let binary = try #require(answers.first { $0.stringID == "bin" })
        let expected = Data((0..<256).map { UInt8($0) })
        let base64 = try #require(binary.object["bodyBase64"] as? String, "no bodyBase64 in \(binary.raw)")
        #expect(Data(base64Encoded: base64) == expected)
        #expect(binary.body == String(decoding: expected, as: UTF8.self))
        let text = try #require(answers.first { $0.stringID == "text" })
        #expect(text.body == "héllo ✓")
        #expect(text.object["bodyBase64"] == nil)
        }
    }
}
