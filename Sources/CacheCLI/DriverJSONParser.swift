import Foundation

/// Parses one driver request line (RFC 8259 JSON text whose top level is an object) straight from its bytes,
/// without building a `String` of the whole line first.
///
/// Strings are decoded from their bytes in one go when they hold no escapes; a string whose bytes are not valid
/// UTF-8 makes the line malformed (RFC 8259 §8.1: an id, URL or header changed into U+FFFD would no longer be the
/// caller's). Numbers: a plainly written integer that fits in 64 bits is an integer; any other number (fraction,
/// exponent, `-0`, beyond 64 bits or beyond a `Double`'s range) keeps its JSON text, so an id is echoed exactly
/// as given. Nesting is limited to ``maximumDepth`` so a hostile line cannot exhaust the stack.
struct DriverJSONParser {
    /// The deepest nesting of arrays and objects accepted (a request needs 3).
    static let maximumDepth = 32

    /// Why a line is not a JSON object.
    struct Malformed: Error {}

    private let base: UnsafePointer<UInt8>
    private let count: Int
    private var i = 0

    private init(base: UnsafePointer<UInt8>, count: Int) {
        self.base = base
        self.count = count
    }

    /// The members of the JSON object `bytes` holds (for a repeated name the last one wins).
    /// - Throws: ``Malformed`` when `bytes` is not exactly one JSON object (optionally surrounded by whitespace).
    static func object(_ bytes: UnsafeRawBufferPointer) throws(Malformed) -> [String: DriverJSONValue] {
        let typed = bytes.bindMemory(to: UInt8.self)
        guard let base = typed.baseAddress else { throw Malformed() }
        var parser = DriverJSONParser(base: base, count: typed.count)
        parser.skipWhitespace()
        guard parser.peek == UInt8(ascii: "{") else { throw Malformed() }
        guard case .object(let members) = try parser.value(depth: 0) else { throw Malformed() }
        parser.skipWhitespace()
        guard parser.i == parser.count else { throw Malformed() }
        return members
    }

    private var peek: UInt8? { i < count ? base[i] : nil }

    private mutating func skipWhitespace() {
        while i < count {
            switch base[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    private mutating func expect(_ byte: UInt8) throws(Malformed) {
        guard i < count, base[i] == byte else { throw Malformed() }
        i += 1
    }

    private mutating func literal(_ text: StaticString) throws(Malformed) {
        let length = text.utf8CodeUnitCount
        guard i + length <= count, memcmp(base + i, text.utf8Start, length) == 0 else { throw Malformed() }
        i += length
    }

    private mutating func value(depth: Int) throws(Malformed) -> DriverJSONValue {
        skipWhitespace()
        guard let byte = peek else { throw Malformed() }
        switch byte {
        case UInt8(ascii: "{"):
            guard depth < Self.maximumDepth else { throw Malformed() }
            i += 1
            var members: [String: DriverJSONValue] = [:]
            skipWhitespace()
            if peek == UInt8(ascii: "}") {
                i += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                let name = try string()
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                members[name] = try value(depth: depth + 1)
                skipWhitespace()
                if peek == UInt8(ascii: ",") { i += 1; continue }
                try expect(UInt8(ascii: "}"))
                return .object(members)
            }
        case UInt8(ascii: "["):
            guard depth < Self.maximumDepth else { throw Malformed() }
            i += 1
            var items: [DriverJSONValue] = []
            skipWhitespace()
            if peek == UInt8(ascii: "]") {
                i += 1
                return .array(items)
            }
            while true {
                items.append(try value(depth: depth + 1))
                skipWhitespace()
                if peek == UInt8(ascii: ",") { i += 1; continue }
                try expect(UInt8(ascii: "]"))
                return .array(items)
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try number()
        default:
            throw Malformed()
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// A number by RFC 8259 §6's grammar.
    private mutating func number() throws(Malformed) -> DriverJSONValue {
        let start = i
        var integral = true
        if peek == UInt8(ascii: "-") { i += 1 }
        guard let first = peek, Self.isDigit(first) else { throw Malformed() }
        i += 1
        if first != UInt8(ascii: "0") {
            while let byte = peek, Self.isDigit(byte) { i += 1 }
        }
        if peek == UInt8(ascii: ".") {
            integral = false
            i += 1
            guard let byte = peek, Self.isDigit(byte) else { throw Malformed() }
            while let byte = peek, Self.isDigit(byte) { i += 1 }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            integral = false
            i += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { i += 1 }
            guard let byte = peek, Self.isDigit(byte) else { throw Malformed() }
            while let byte = peek, Self.isDigit(byte) { i += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(start: base + start, count: i - start), as: UTF8.self)
        if integral, let value = Int64(text), String(value) == text { return .integer(value) }
        return .number(text)
    }

    /// A string starting at its opening quote: escapes decoded (RFC 8259 §7), raw control characters refused.
    private mutating func string() throws(Malformed) -> String {
        try expect(UInt8(ascii: "\""))
        let start = i
        // Fast path: no escapes until the closing quote.
        while i < count {
            let byte = base[i]
            if byte == UInt8(ascii: "\"") {
                guard let text = String(validating: UnsafeBufferPointer(start: base + start, count: i - start),
                                        as: UTF8.self) else { throw Malformed() }
                i += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw Malformed() }
            i += 1
        }
        guard i < count else { throw Malformed() }
        var decoded = [UInt8](UnsafeBufferPointer(start: base + start, count: i - start))
        while i < count {
            let byte = base[i]
            switch byte {
            case UInt8(ascii: "\""):
                i += 1
                guard let text = String(validating: decoded, as: UTF8.self) else { throw Malformed() }
                return text
            case UInt8(ascii: "\\"):
                i += 1
                guard let escape = peek else { throw Malformed() }
                i += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    let scalar = try unicodeEscape()
                    decoded.append(contentsOf: String(Character(scalar)).utf8)
                default: throw Malformed()
                }
            case 0..<0x20:
                throw Malformed()
            default:
                decoded.append(byte)
                i += 1
            }
        }
        throw Malformed()
    }

    /// Four hex digits after `\u`.
    private mutating func hex4() throws(Malformed) -> UInt32 {
        guard i + 4 <= count else { throw Malformed() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = base[i]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Malformed()
            }
            value = value << 4 | UInt32(digit)
            i += 1
        }
        return value
    }

    /// The scalar of a `\uXXXX` escape (the `\u` already read), joining a surrogate pair; a lone surrogate is
    /// malformed.
    private mutating func unicodeEscape() throws(Malformed) -> Unicode.Scalar {
        let first = try hex4()
        if (0xD800...0xDBFF).contains(first) {
            try literal("\\u")
            let second = try hex4()
            guard (0xDC00...0xDFFF).contains(second) else { throw Malformed() }
            let value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            guard let scalar = Unicode.Scalar(value) else { throw Malformed() }
            return scalar
        }
        guard let scalar = Unicode.Scalar(first) else { throw Malformed() }
        return scalar
    }
}
