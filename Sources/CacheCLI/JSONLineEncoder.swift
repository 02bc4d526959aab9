import Foundation

/// Writes one JSON value as UTF-8 bytes straight into a byte buffer (RFC 8259), for output lines that must be
/// produced at the speed of copying bytes: the driver's answers.
///
/// Strings are escaped over their contiguous UTF-8 bytes: runs of bytes that need no escape are copied in one
/// go (checked eight bytes at a time). Besides what JSON requires (`"`, `\`, U+0000–U+001F), DEL, the C1
/// controls U+0080–U+009F and U+2028/U+2029 are escaped as `\uXXXX`, so a line never carries a raw control
/// character (a terminal reading it cannot be driven by origin bytes). Byte input that is not valid UTF-8 is
/// written as U+FFFD per maximal invalid subpart (the Unicode recommendation, as `String(decoding:as:)` does),
/// and the writer reports it so the caller can add the exact bytes another way (base64).
///
/// Commas and colons are placed automatically: call ``key(_:)`` before each member value of an object.
struct JSONLineEncoder {
    /// The encoded bytes so far.
    private(set) var bytes: [UInt8] = []
    /// One entry per open object or array: whether it already holds a member or element.
    private var hasElement: [Bool] = []
    /// Whether a key was just written (the next value needs no comma).
    private var afterKey = false

    /// Creates an empty encoder with room for `capacity` bytes.
    init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// Reserves room for `count` more bytes.
    mutating func reserve(_ count: Int) {
        bytes.reserveCapacity(bytes.count + count)
    }

    private mutating func beginValue() {
        if afterKey {
            afterKey = false
        } else if let last = hasElement.indices.last {
            if hasElement[last] { bytes.append(UInt8(ascii: ",")) }
            hasElement[last] = true
        }
    }

    /// Opens an object (`{`).
    mutating func beginObject() { beginContainer(UInt8(ascii: "{")) }

    /// Closes the innermost object (`}`).
    mutating func endObject() { endContainer(UInt8(ascii: "}")) }

    /// Opens an array (`[`).
    mutating func beginArray() { beginContainer(UInt8(ascii: "[")) }

    /// Closes the innermost array (`]`).
    mutating func endArray() { endContainer(UInt8(ascii: "]")) }

    /// Writes the opening `bracket` of an object or array as a value and starts counting its members.
    private mutating func beginContainer(_ bracket: UInt8) {
        beginValue()
        bytes.append(bracket)
        hasElement.append(false)
    }

    /// Writes the closing `bracket` of the innermost object or array.
    private mutating func endContainer(_ bracket: UInt8) {
        hasElement.removeLast()
        bytes.append(bracket)
    }

    /// Writes a member name of the innermost object; `name` must need no escaping (ASCII letters and digits).
    mutating func key(_ name: StaticString) {
        if let last = hasElement.indices.last {
            if hasElement[last] { bytes.append(UInt8(ascii: ",")) }
            hasElement[last] = true
        }
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    /// Writes `null`.
    mutating func null() {
        beginValue()
        bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
    }

    /// Writes `true` or `false`.
    mutating func bool(_ value: Bool) {
        beginValue()
        if value { bytes.append(contentsOf: [0x74, 0x72, 0x75, 0x65]) } else { bytes.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65]) }
    }

    /// Writes an integer in decimal.
    mutating func integer<T: BinaryInteger>(_ value: T) {
        beginValue()
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Writes a finite number (shortest round-trip form); a non-finite one is written as `null` (JSON has none).
    mutating func number(_ value: Double) {
        guard value.isFinite else { return null() }
        beginValue()
        bytes.append(contentsOf: value.description.utf8)
    }

    /// Writes `text`, a JSON number already checked against RFC 8259 §6's grammar (a driver id as read), as is.
    mutating func numberText(_ text: String) {
        beginValue()
        bytes.append(contentsOf: text.utf8)
    }

    /// Writes `text` as a JSON string.
    mutating func string(_ text: String) {
        beginValue()
        var text = text
        text.makeContiguousUTF8()
        text.utf8.withContiguousStorageIfAvailable { _ = Self.appendQuoted($0, to: &bytes) }
    }

    /// Writes `raw` as a JSON string, decoding it as UTF-8.
    /// - Returns: `true` when `raw` is valid UTF-8 (the string is exact); `false` when invalid sequences were
    ///   written as U+FFFD.
    @discardableResult
    mutating func string(utf8 raw: UnsafeRawBufferPointer) -> Bool {
        beginValue()
        return Self.appendQuoted(raw.bindMemory(to: UInt8.self), to: &bytes)
    }

    /// Writes `raw` as a JSON string of its base64 text (RFC 4648, padded).
    mutating func base64(_ raw: UnsafeRawBufferPointer) {
        beginValue()
        bytes.append(UInt8(ascii: "\""))
        Self.appendBase64(raw.bindMemory(to: UInt8.self), to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends already encoded JSON text (one complete value) as the next value.
    mutating func raw(_ json: [UInt8]) {
        beginValue()
        bytes.append(contentsOf: json)
    }

    /// Appends `terminator` bytes (e.g. a newline) after the value and hands over the buffer without a copy.
    mutating func finish(appending terminator: [UInt8] = []) -> [UInt8] {
        bytes.append(contentsOf: terminator)
        var out: [UInt8] = []
        swap(&out, &bytes)
        return out
    }

    // MARK: - Escaping

    /// Appends `"<escaped input>"` to `out`; returns whether `input` was valid UTF-8.
    static func appendQuoted(_ input: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) -> Bool {
        out.append(UInt8(ascii: "\""))
        let exact = appendEscaped(input, to: &out)
        out.append(UInt8(ascii: "\""))
        return exact
    }

    /// The bytes of `word` (little-endian order) that may need attention — below 0x20, `"`, `\\`, DEL or
    /// non-ASCII — each marked by its high bit; 0 when all eight are plain ASCII. The lowest marked byte always
    /// needs attention (a borrow can only mark bytes above a byte that truly matches), so everything below it is
    /// safe to copy; bytes marked above it may be false alarms and are checked again.
    @inline(__always)
    private static func attentionMask(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let below20 = (word &- ones &* 0x20) & ~word
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let del = word ^ (ones &* 0x7F)
        let zeroes = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((del &- ones) & ~del)
        return ((below20 | zeroes) | word) & highs
    }

    /// Input bytes escaped per block: each block is encoded into a scratch buffer with plain stores (a safe byte
    /// costs no call and no capacity check) and appended to the output in one copy.
    private static let blockSize = 4096

    /// Appends the JSON string content of `input` (no quotes) to `out`; returns whether `input` was valid UTF-8.
    static func appendEscaped(_ input: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) -> Bool {
        guard let base = input.baseAddress, input.count > 0 else { return true }
        let count = input.count
        out.reserveCapacity(out.count + count + count / 16 + 16)
        // A block reads at most 7 bytes past its end (the last word) plus a 4-byte sequence; no input byte
        // becomes more than 6 output bytes (`\u00XX`); 8 bytes of slack for the last word's store.
        let capacity = 6 * (min(count, blockSize) + 12) + 8
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { scratch -> Bool in
            guard let buffer = scratch.baseAddress else { return true }
            var exact = true
            var i = 0
            while i < count {
                let end = min(count, i + blockSize)
                let written = encodeBlock(base, count: count, from: &i, to: end, into: buffer, exact: &exact)
                out.append(contentsOf: UnsafeBufferPointer(start: buffer, count: written))
            }
            return exact
        }
    }

    /// Encodes `input[i...]` until `i` reaches `end` (a last word or sequence may take it a few bytes past) into
    /// `output`; returns the number of bytes written. Clears `exact` when an invalid sequence was replaced.
    @inline(__always)
    private static func encodeBlock(_ base: UnsafePointer<UInt8>, count: Int, from i: inout Int, to end: Int,
                                    into output: UnsafeMutablePointer<UInt8>, exact: inout Bool) -> Int {
        var o = 0
        let raw = UnsafeMutableRawPointer(output)
        while i < end {
            // Eight bytes at a time up to the first one that may need attention; the word is stored whole and
            // only its safe bytes are kept.
            while i < end && i + 8 <= count {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                raw.storeBytes(of: word, toByteOffset: o, as: UInt64.self)
                let mask = attentionMask(word.littleEndian)
                if mask == 0 {
                    i += 8
                    o += 8
                } else {
                    let safe = mask.trailingZeroBitCount >> 3
                    i += safe
                    o += safe
                    break
                }
            }
            guard i < end else { break }
            let byte = base[i]
            if byte >= 0x20 && byte < 0x7F && byte != 0x22 && byte != 0x5C {
                output[o] = byte
                o += 1
                i += 1
                continue
            }
            if byte < 0x80 {
                o += writeEscape(for: byte, to: output + o)
                i += 1
                continue
            }
            let length = validSequenceLength(base, at: i, count: count)
            if length > 0 {
                let second = base[i + 1]
                if byte == 0xC2 && second < 0xA0 {
                    // C1 control U+0080–U+009F.
                    o += writeUnicodeEscape(UInt16(second), to: output + o)
                } else if byte == 0xE2 && second == 0x80 && (base[i + 2] == 0xA8 || base[i + 2] == 0xA9) {
                    // U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR.
                    o += writeUnicodeEscape(base[i + 2] == 0xA8 ? 0x2028 : 0x2029, to: output + o)
                } else {
                    for k in 0..<length { output[o + k] = base[i + k] }
                    o += length
                }
                i += length
            } else {
                output[o] = 0xEF
                output[o + 1] = 0xBF
                output[o + 2] = 0xBD
                o += 3
                exact = false
                i += maximalInvalidSubpart(base, at: i, count: count)
            }
        }
        return o
    }

    /// The length (2–4) of the well-formed UTF-8 sequence starting at `i`, or 0 when it is not one
    /// (Unicode Table 3-7: no overlongs, no surrogates, nothing above U+10FFFF).
    @inline(__always)
    private static func validSequenceLength(_ p: UnsafePointer<UInt8>, at i: Int, count: Int) -> Int {
        let lead = p[i]
        func continuation(_ k: Int) -> Bool { i + k < count && p[i + k] & 0xC0 == 0x80 }
        switch lead {
        case 0xC2...0xDF:
            return continuation(1) ? 2 : 0
        case 0xE0...0xEF:
            guard i + 2 < count, continuation(2) else { return 0 }
            let second = p[i + 1]
            let lower: UInt8 = lead == 0xE0 ? 0xA0 : 0x80
            let upper: UInt8 = lead == 0xED ? 0x9F : 0xBF
            return second >= lower && second <= upper ? 3 : 0
        case 0xF0...0xF4:
            guard i + 3 < count, continuation(2), continuation(3) else { return 0 }
            let second = p[i + 1]
            let lower: UInt8 = lead == 0xF0 ? 0x90 : 0x80
            let upper: UInt8 = lead == 0xF4 ? 0x8F : 0xBF
            return second >= lower && second <= upper ? 4 : 0
        default:
            return 0
        }
    }

    /// How many bytes one U+FFFD replaces at `i`, where no well-formed sequence starts: the lead byte plus the
    /// continuation bytes that could still have completed it (the maximal subpart), at least 1.
    private static func maximalInvalidSubpart(_ p: UnsafePointer<UInt8>, at i: Int, count: Int) -> Int {
        let lead = p[i]
        let needed: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: needed = 1
        case 0xE0...0xEF:
            needed = 2
            if lead == 0xE0 { lower = 0xA0 }
            if lead == 0xED { upper = 0x9F }
        case 0xF0...0xF4:
            needed = 3
            if lead == 0xF0 { lower = 0x90 }
            if lead == 0xF4 { upper = 0x8F }
        default: return 1
        }
        var length = 1
        while length <= needed, i + length < count {
            let byte = p[i + length]
            let inRange = length == 1 ? (byte >= lower && byte <= upper) : (byte & 0xC0 == 0x80)
            guard inRange else { break }
            length += 1
        }
        return length
    }

    /// Writes the escape of an ASCII byte that may not appear raw — `\"`, `\\`, `\n` ... or `\u00XX` — at
    /// `out`; returns its length.
    @inline(__always)
    private static func writeEscape(for byte: UInt8, to out: UnsafeMutablePointer<UInt8>) -> Int {
        let second: UInt8
        switch byte {
        case 0x22: second = 0x22
        case 0x5C: second = 0x5C
        case 0x0A: second = UInt8(ascii: "n")
        case 0x0D: second = UInt8(ascii: "r")
        case 0x09: second = UInt8(ascii: "t")
        case 0x08: second = UInt8(ascii: "b")
        case 0x0C: second = UInt8(ascii: "f")
        default: return writeUnicodeEscape(UInt16(byte), to: out)
        }
        out[0] = 0x5C
        out[1] = second
        return 2
    }

    /// Writes `\uXXXX` (lowercase hex) for a BMP code point at `out`; returns 6.
    @inline(__always)
    private static func writeUnicodeEscape(_ value: UInt16, to out: UnsafeMutablePointer<UInt8>) -> Int {
        @inline(__always) func hex(_ nibble: UInt16) -> UInt8 {
            let digit = UInt8(truncatingIfNeeded: nibble & 0xF)
            return digit < 10 ? 0x30 + digit : 0x57 + digit
        }
        out[0] = 0x5C
        out[1] = UInt8(ascii: "u")
        out[2] = hex(value >> 12)
        out[3] = hex(value >> 8)
        out[4] = hex(value >> 4)
        out[5] = hex(value)
        return 6
    }

    private static let base64Alphabet: [UInt8] =
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Appends the base64 text of `input` (RFC 4648 §4, padded with `=`).
    static func appendBase64(_ input: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        let count = input.count
        out.reserveCapacity(out.count + (count + 2) / 3 * 4)
        base64Alphabet.withUnsafeBufferPointer { table in
            var i = 0
            while i + 3 <= count {
                let word = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                out.append(table[Int(word >> 18)])
                out.append(table[Int(word >> 12) & 0x3F])
                out.append(table[Int(word >> 6) & 0x3F])
                out.append(table[Int(word) & 0x3F])
                i += 3
            }
            let rest = count - i
            if rest == 1 {
                let word = UInt32(input[i]) << 16
                out.append(contentsOf: [table[Int(word >> 18)], table[Int(word >> 12) & 0x3F], 0x3D, 0x3D])
            } else if rest == 2 {
                let word = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
                out.append(contentsOf: [table[Int(word >> 18)], table[Int(word >> 12) & 0x3F],
                                        table[Int(word >> 6) & 0x3F], 0x3D])
            }
        }
    }
}
