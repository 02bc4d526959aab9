import Foundation

/// Serialises the tool's `--json` output: JSONSerialization with sorted keys, one value per line.
///
/// Values are plain Swift values (`String`, `Int`, `Int64`, `Double`, `Bool`, arrays, `[String: Any]`); use
/// ``JSONOutput/null`` for JSON `null` so a field is always present.
public enum JSONOutput {
    /// JSON `null`, for fields that are always present but sometimes empty (e.g. `path`, `age`).
    public static var null: Any { NSNull() }

    /// `value` or JSON `null` when nil.
    public static func orNull(_ value: Any?) -> Any { value ?? NSNull() }

    /// One line of JSON (sorted keys, no escaped slashes) for `object`.
    /// - Throws: ``CommandFailure`` when the value holds something JSON cannot represent (e.g. NaN).
    public static func line(_ object: Any) throws(CommandFailure) -> String {
        guard JSONSerialization.isValidJSONObject(object) else {
            throw CommandFailure("internal error: output is not representable as JSON")
        }
        do {
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            return String(decoding: data, as: UTF8.self)
        } catch {
            throw CommandFailure("internal error: JSON encoding failed: \(ErrorText.describe(error))")
        }
    }

    /// Whole seconds for `age` fields (RFC 9111 ages are integer seconds), or `null`.
    public static func seconds(_ value: TimeInterval?) -> Any {
        guard let value, value.isFinite else { return NSNull() }
        return Formatting.wholeSeconds(value.rounded(.down))
    }
}
