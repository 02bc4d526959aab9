import Foundation
import DownloadCache

/// `--max-disk SIZE` and `--max-entry SIZE`: the cache's byte limits for this run.
///
/// Given on each run (not remembered by the cache directory): a run without them uses the library's defaults
/// (1 GiB on disk, one eighth of it per entry). SIZE is a whole number of bytes with an optional suffix `K`, `M`
/// or `G` (powers of 1024, case-insensitive): `500M`, `2G`, `65536`.
enum StorageLimitOptions {
    /// The two options, in help order.
    static let options: [OptionSpec] = [
        OptionSpec("max-disk", .value("size"), help: "Bytes of bodies kept on disk before the least recently used are evicted (K/M/G suffixes; default 1G)."),
        OptionSpec("max-entry", .value("size"), help: "Largest body stored; larger ones are delivered, not stored, nothing evicted (default: max-disk/8)."),
    ]

    /// The limits given on the command line (`nil` = not given).
    struct Limits: Sendable {
        var maxDisk: Int64?
        var maxEntry: Int64?

        /// Sets the given limits on `configuration`.
        func apply(to configuration: inout DownloadCache.Configuration) {
            if let maxDisk { configuration.maxDiskBytes = maxDisk }
            if let maxEntry { configuration.maxEntryBytes = maxEntry }
        }
    }

    /// Reads `--max-disk` and `--max-entry`.
    /// - Throws: ``UsageError`` naming the option and the bad value.
    static func parse(_ parsed: ParsedArguments) throws(UsageError) -> Limits {
        Limits(maxDisk: try parsed.value("max-disk").map { text throws(UsageError) in try size(text, option: "max-disk") },
               maxEntry: try parsed.value("max-entry").map { text throws(UsageError) in try size(text, option: "max-entry") })
    }

    /// A byte count with an optional K/M/G suffix (powers of 1024).
    /// - Throws: ``UsageError`` when it is not digits plus at most one suffix, or exceeds 2^62 bytes.
    static func size(_ text: String, option: String) throws(UsageError) -> Int64 {
        let multipliers: [Character: Int64] = ["k": 1 << 10, "m": 1 << 20, "g": 1 << 30]
        var digits = Substring(text)
        var multiplier: Int64 = 1
        if let last = text.last?.lowercased().first, let factor = multipliers[last] {
            multiplier = factor
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int64(digits),
              value <= (Int64(1) << 62) / multiplier else {
            throw UsageError("invalid value '\(text)' for '--\(option)': expected a byte count such as 65536, 500M or 2G")
        }
        return value * multiplier
    }
}
