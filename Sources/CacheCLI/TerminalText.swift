/// Text from outside the tool (origin header fields, reason phrases, request header values in a variant) made
/// safe to print: control characters are shown as escapes instead of reaching the terminal, which would act on
/// them (an ESC sequence can retitle the window or hide text, BS and a bare CR can overwrite what came before).
///
/// Escaped: C0 controls except TAB (`\x1b`, `\r`, `\n`...), DEL (`\x7f`), C1 controls U+0080–U+009F
/// (`\u{9b}`), U+2028/U+2029, and the bidirectional formatting characters U+061C, U+200E/U+200F,
/// U+202A–U+202E and U+2066–U+2069 (they reorder what the terminal shows). Everything else is unchanged.
enum TerminalText {
    /// `text` with every unsafe character escaped (see the type's summary); unchanged when it has none.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                out.append(scalar)
                continue
            }
            let escape: String
            switch scalar.value {
            case 0x0A: escape = "\\n"
            case 0x0D: escape = "\\r"
            case 0..<0x80: escape = "\\x" + hex(scalar.value, digits: 2)
            default: escape = "\\u{" + String(scalar.value, radix: 16) + "}"
            }
            out.append(contentsOf: escape.unicodeScalars)
        }
        return String(out)
    }

    /// Whether `scalar` must not reach a terminal raw.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09: return false
        case 0..<0x20, 0x7F, 0x80...0x9F: return true
        case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
