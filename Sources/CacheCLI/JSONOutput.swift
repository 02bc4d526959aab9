import Foundation

/// Serialises the tool's `--json` output: JSONSerialization with sorted keys, one value per line.
///
/// Values are plain Swift values (`String`, `Int`, `Int64`, `Double`, `Bool`, arrays, `[String: Any]`); use
/// ``JSONOutput/null`` for JSON `null` so a field is always present.
package enum JSONOutput {
    /// JSON `null`, for fields that are always present but sometimes empty (e.g. `path`, `age`).
    package static var null: Any { NSNull() }

    /// `value` or JSON `null` when nil.
    package static func orNull(_ value: Any?) -> Any { value ?? NSNull() }

    /// One line of JSON (sorted keys, no escaped slashes) for `object`.
    /// - Throws: ``CommandFailure`` when the value holds something JSON cannot represent (e.g. NaN).
    package static func line(_ object: Any) throws(CommandFailure) -> String {
        guard JSONSerialization.isValidJSONObject(object) else {
            throw CommandFailure("internal error: output is not representable as JSON")
        }
        do {
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            return String(decoding: escapingControls(data), as: UTF8.self)
        } catch {
            throw CommandFailure("internal error: JSON encoding failed: \(ErrorText.describe(error))")
        }
    }

    /// `json` (UTF-8 JSON text) with DEL, the C1 controls U+0080–U+009F and U+2028/U+2029 written as `\uXXXX`
    /// (JSONSerialization escapes only what JSON requires, U+0000–U+001F), so no raw control character from an
    /// origin reaches a terminal. These byte sequences occur only inside strings (JSON's syntax is ASCII).
    static func escapingControls(_ json: Data) -> [UInt8] {
        let bytes = [UInt8](json)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        func unicodeEscape(_ value: Int) {
            let hex = Array("0123456789abcdef".utf8)
            out.append(contentsOf: [0x5C, 0x75, hex[(value >> 12) & 0xF], hex[(value >> 8) & 0xF],
                                    hex[(value >> 4) & 0xF], hex[value & 0xF]])
        }
        while i < bytes.count {
            let byte = bytes[i]
            if byte == 0x7F {
                unicodeEscape(0x7F)
                i += 1
            } else if byte == 0xC2, i + 1 < bytes.count, (0x80...0x9F).contains(bytes[i + 1]) {
                unicodeEscape(Int(bytes[i + 1]))
                i += 2
            } else if byte == 0xE2, i + 2 < bytes.count, bytes[i + 1] == 0x80, bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9 {
                unicodeEscape(bytes[i + 2] == 0xA8 ? 0x2028 : 0x2029)
                i += 3
            } else {
                out.append(byte)
                i += 1
            }
        }
        return out
    }

    /// Whole seconds for `age` fields (RFC 9111 ages are integer seconds), or `null`.
    package static func seconds(_ value: TimeInterval?) -> Any {
        guard let value, value.isFinite else { return NSNull() }
        return Formatting.wholeSeconds(value.rounded(.down))
    }
}
