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
        var current = String.UnicodeScalarView()
        var inQuote = false
        var escaped = false
        for scalar in value.unicodeScalars {
            if inQuote {
                current.append(scalar)
                if escaped { escaped = false } else if scalar == "\\" { escaped = true } else if scalar == "\"" { inQuote = false }
                continue
            }
            if scalar == "," {
                appendTrimmed(String(current), to: &members)
                current = String.UnicodeScalarView()
                continue
            }
            if scalar == "\"" { inQuote = true }
            current.append(scalar)
        }
        appendTrimmed(String(current), to: &members)
        return members
    }

    /// The list members of every line of the field `name` (case-insensitive), in order (RFC 9110 §5.3).
    public static func listMembers(of headers: HTTPHeaders, named name: String) -> [String] {
        headers.values(for: name).flatMap { listMembers($0) }
    }

    /// Parses delta-seconds (RFC 9111 §1.2.2): one or more ASCII digits, nothing else.
    ///
    /// Values above 2^31 become 2^31 (2,147,483,648 seconds) as §1.2.2 requires. Returns `nil` for anything
    /// else (negative, empty, fractional, signs, spaces), which callers handle as §4.2.1 advises.
    public static func deltaSeconds(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        var value = 0
        for byte in bytes {
            value = value * 10 + Int(byte - 48)
            if value > deltaSecondsCeiling { return deltaSecondsCeiling }
        }
        return value
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
        let scalars = Array(text.unicodeScalars)
        guard scalars.first == "\"" else { return false }
        var escaped = false
        for scalar in scalars.dropFirst() {
            if escaped { escaped = false } else if scalar == "\\" { escaped = true } else if scalar == "\"" { return false }
        }
        return true
    }

    /// The `Age` value (RFC 9111 §5.1) in seconds: the first list member if it is valid delta-seconds, else `nil`
    /// (an invalid Age is ignored).
    public static func age(_ headers: HTTPHeaders) -> Int? {
        guard let first = listMembers(of: headers, named: "Age").first else { return nil }
        return deltaSeconds(first)
    }

    /// The field names listed by `Vary` (RFC 9110 §12.5.5), lower-cased, duplicates removed, in first-seen
    /// order; `nil` when the list contains `*` (the response never matches another request).
    public static func varyFieldNames(_ responseHeaders: HTTPHeaders) -> [String]? {
        var names: [String] = []
        for member in listMembers(of: responseHeaders, named: "Vary") {
            let name = member.lowercased()
            if name == "*" { return nil }
            if !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// The first valid HTTP-date among the lines of field `name`, or `nil` when absent or all invalid.
    static func firstDate(_ headers: HTTPHeaders, _ name: String) -> Date? {
        for value in headers.values(for: name) {
            if let date = HTTPDate.parse(value) { return date }
        }
        return nil
    }

    /// Collapses runs of spaces/tabs inside a value to one space (for secondary-key normalisation).
    static func collapseWhitespace(_ text: String) -> String {
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
