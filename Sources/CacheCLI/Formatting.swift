import Foundation

/// Human-readable numbers for the tool's text output (byte sizes, durations, rates, tables).
package enum Formatting {
    /// `1234` → `1.2 KB`, using powers of 1,000 (bytes); below 1,000 prints `N B`.
    package static func bytes(_ count: Int64) -> String {
        scaled(count, base: 1000, units: ["B", "KB", "MB", "GB", "TB"])
    }

    /// A byte count in binary units (powers of 1024), the units `--max-disk` and `--max-entry` take: `512 B`,
    /// `1.5 KiB`, `10.0 MiB`, `1.0 GiB`.
    package static func binaryBytes(_ count: Int64) -> String {
        scaled(count, base: 1024, units: ["B", "KiB", "MiB", "GiB", "TiB"])
    }

    /// `count` divided by `base` until below it (at most to the last unit), with one decimal; `N B` unscaled.
    private static func scaled(_ count: Int64, base: Double, units: [String]) -> String {
        var value = Double(count)
        var unit = 0
        while abs(value) >= base, unit < units.count - 1 {
            value /= base
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// Seconds as `42s`, `3m05s` or `2h03m`; negative or non-finite input prints `--`. `rule` makes whole seconds:
    /// ages and lifetimes round down (`ls`, `info`, `-v` and `--json` alike, as `Age` does, RFC 9111 §5.1),
    /// estimates (an ETA) to the nearest.
    package static func duration(_ seconds: TimeInterval,
                                 rounding rule: FloatingPointRoundingRule = .toNearestOrAwayFromZero) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "--" }
        let total = wholeSeconds(seconds.rounded(rule))
        if total < 60 { return "\(total)s" }
        if total < 3600 { return "\(total / 60)m\(twoDigits(total % 60))s" }
        return "\(total / 3600)h\(twoDigits((total % 3600) / 60))m"
    }

    /// `n` with a leading zero below 10 (`5` → `05`).
    private static func twoDigits(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// Whole seconds for ages in one-line summaries (`age=3s`); nil prints `-`.
    package static func age(_ seconds: TimeInterval?) -> String {
        guard let seconds, seconds.isFinite else { return "-" }
        return "\(wholeSeconds(seconds.rounded(.down)))s"
    }

    /// Converts a number of seconds to `Int` without trapping: NaN becomes 0 and values beyond `Int`'s range
    /// are clamped to `Int.min` / `Int.max` (a stored entry's metadata may carry any lifetime, however large).
    package static func wholeSeconds(_ value: Double) -> Int {
        guard value.isFinite else { return value.isNaN ? 0 : (value > 0 ? Int.max : Int.min) }
        if value >= 9.2e18 { return Int.max }
        if value <= -9.2e18 { return Int.min }
        return Int(value)
    }

    /// Converts a byte count or rate to `Int64` without trapping (NaN → 0, clamped to `Int64`'s range).
    package static func clampedInt64(_ value: Double) -> Int64 {
        Int64(wholeSeconds(value))
    }

    /// Pads rows into left-aligned columns separated by two spaces (the last column is not padded).
    package static func table(_ rows: [[String]]) -> String {
        guard let width = rows.map(\.count).max(), width > 0 else { return "" }
        var widths = [Int](repeating: 0, count: width)
        for row in rows {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) }
        }
        return rows.map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}
