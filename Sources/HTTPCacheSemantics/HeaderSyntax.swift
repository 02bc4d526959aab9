import Foundation

/// Small, total parsers for the field-value grammar pieces RFC 9110 §5.6 defines (lists, quoted strings,
/// delta-seconds). None of them throws or traps: bad input yields `nil` or is skipped.
public enum HeaderSyntax {
    /// The value RFC 9111 §1.2.2 says to use for a delta-seconds too large to represent: 2^31 seconds.
    public static let deltaSecondsCeiling = 2_147_483_648

    /// Splits a list-based field value at commas outside quoted strings, trimming OWS and dropping empty
    /// members (RFC 9110 §5.6.1). An unterminated quoted string runs to the end of the value.
    public static func listMembers(_ value: String) -> [String] {
        var members: [String] = []
        forEachMember(value) { members.append(String($0)) }
        return members
    }

    /// Calls `body` with each list member of `value` (see ``listMembers(_:)``) without building an array.
    static func forEachMember(_ value: String, _ body: (Substring) -> Void) {
        let utf8 = value.utf8
        var start = utf8.startIndex
        var index = start
        var inQuote = false, escaped = false
        while index != utf8.endIndex {
            let byte = utf8[index]
            if inQuote {
                if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inQuote = false }
            } else if byte == 0x2C {
                if let member = trimmed(value, start, index) { body(member) }
                start = utf8.index(after: index)
            } else if byte == 0x22 {
                inQuote = true
            }
            index = utf8.index(after: index)
        }
        if let member = trimmed(value, start, utf8.endIndex) { body(member) }
    }

    /// Calls `body` with the byte range of each list member of `bytes` (commas outside quoted strings split;
    /// OWS trimmed; empty members skipped), RFC 9110 §5.6.1.
    static func forEachMemberRange(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) -> Void) {
        var start = 0
        var inQuote = false, escaped = false
        for index in 0..<bytes.count {
            let byte = bytes[index]
            if inQuote {
                if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inQuote = false }
            } else if byte == 0x2C {
                let member = trimmedRange(bytes, start..<index)
                if !member.isEmpty { body(member) }
                start = index + 1
            } else if byte == 0x22 {
                inQuote = true
            }
        }
        let member = trimmedRange(bytes, start..<bytes.count)
        if !member.isEmpty { body(member) }
    }

    /// `range` without leading and trailing spaces/tabs.
    static func trimmedRange(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound, upper = range.upperBound
        while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
        while lower < upper, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
        return lower..<upper
    }

    /// `value[start..<end]` without surrounding spaces/tabs, or `nil` when nothing is left.
    private static func trimmed(_ value: String, _ start: String.Index, _ end: String.Index) -> Substring? {
        let utf8 = value.utf8
        var lower = start, upper = end
        while lower < upper, utf8[lower] == 0x20 || utf8[lower] == 0x09 { lower = utf8.index(after: lower) }
        while lower < upper {
            let before = utf8.index(before: upper)
            guard utf8[before] == 0x20 || utf8[before] == 0x09 else { break }
            upper = before
        }
        return lower < upper ? value[lower..<upper] : nil
    }

    /// ASCII-lower-cased copy (field names and directive names are ASCII, RFC 9110 §5.1); other bytes kept.
    static func asciiLowercased<S: StringProtocol>(_ text: S) -> String {
        guard text.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return String(text) }
        return String(decoding: text.utf8.map { ($0 >= 0x41 && $0 <= 0x5A) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// The list members of every line of the field `name` (case-insensitive), in order (RFC 9110 §5.3).
    public static func listMembers(of headers: HTTPHeaders, named name: String) -> [String] {
        headers.values(for: name).flatMap { listMembers($0) }
    }

    /// Parses delta-seconds (RFC 9111 §1.2.2): one or more ASCII digits, nothing else.
    ///
    /// Values above 2^31 become 2^31 (2,147,483,648 seconds) as §1.2.2 requires. Returns `nil` for anything
    /// else (negative, empty, fractional, signs, spaces), which callers handle as §4.2.1 advises.
    public static func deltaSeconds<S: StringProtocol>(_ text: S) -> Int? {
        var value = 0, digits = 0
        for byte in text.utf8 {
            guard byte >= 48 && byte <= 57 else { return nil }
            digits += 1
            if value <= deltaSecondsCeiling { value = value * 10 + Int(byte - 48) }
        }
        guard digits > 0 else { return nil }
        return min(value, deltaSecondsCeiling)
    }

    /// If `text` is a quoted-string (RFC 9110 §5.6.4) returns its content with quoted-pairs unescaped;
    /// `nil` when it does not start with a double quote. An unterminated string yields its content so far.
    public static func unquote(_ text: String) -> String? {
        guard text.unicodeScalars.first == "\"" else { return nil }
        var out = String.UnicodeScalarView()
        var escaped = false
        for scalar in text.unicodeScalars.dropFirst() {
            if escaped {
                out.append(scalar)
                escaped = false
            } else if scalar == "\\" {
                escaped = true
            } else if scalar == "\"" {
                break
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// Whether `text` starts with a double quote but has no closing one (used to record a parse problem).
    static func isUnterminatedQuote(_ text: String) -> Bool {
        guard text.utf8.first == 0x22 else { return false }
        var escaped = false
        for byte in text.utf8.dropFirst() {
            if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { return false }
        }
        return true
    }

    /// The `Age` value (RFC 9111 §5.1) in seconds: the first list member if it is valid delta-seconds, else `nil`
    /// (an invalid Age is ignored).
    public static func age(_ headers: HTTPHeaders) -> Int? {
        for value in headers.values(for: "Age") {
            var first: Substring?
            forEachMember(value) { member in if first == nil { first = member } }
            if let first { return deltaSeconds(first) }
        }
        return nil
    }

    /// The field names listed by `Vary` (RFC 9110 §12.5.5), lower-cased, duplicates removed, in first-seen
    /// order; `nil` when the list contains `*` (the response never matches another request).
    public static func varyFieldNames(_ responseHeaders: HTTPHeaders) -> [String]? {
        var names: [String] = []
        var star = false
        for value in responseHeaders.values(for: "Vary") {
            forEachMember(value) { member in
                let name = asciiLowercased(member)
                if name == "*" { star = true }
                if !names.contains(name) { names.append(name) }
            }
        }
        return star ? nil : names
    }

    /// The first valid HTTP-date among the lines of field `name`, or `nil` when absent or all invalid.
    static func firstDate(_ headers: HTTPHeaders, _ name: String) -> Date? {
        for value in headers.values(for: name) {
            if let date = HTTPDate.parse(value) { return date }
        }
        return nil
    }

    /// Collapses runs of spaces/tabs inside a value to one space (for secondary-key normalisation).
    static func collapseWhitespace<S: StringProtocol>(_ text: S) -> String {
        guard text.utf8.contains(where: { $0 == 0x09 }) || text.contains("  ") else { return String(text) }
        var out = String.UnicodeScalarView()
        var lastWasSpace = false
        for scalar in text.unicodeScalars {
            if scalar == " " || scalar == "\t" {
                if !lastWasSpace { out.append(" ") }
                lastWasSpace = true
            } else {
                out.append(scalar)
                lastWasSpace = false
            }
        }
        return String(out)
    }

    private static func appendTrimmed(_ text: String, to members: inout [String]) {
        let trimmed = HTTPHeaders.trimOWS(text)
        if !trimmed.isEmpty { members.append(trimmed) }
    }
}
