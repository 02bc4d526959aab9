import Foundation
import DownloadCache
import CacheStore

/// `--max-disk SIZE` and `--max-entry SIZE`: the cache's byte limits for this run; `--max-filesize SIZE`: the most
/// bytes one response body may have (curl's option of that name).
///
/// Given on each run (not remembered by the cache directory): a run without them uses the library's defaults
/// (1 GiB on disk, one eighth of it per entry). SIZE is a number of bytes greater than 0 with an optional suffix
/// `K`, `M` or `G` (powers of 1024 however written: `M`, `MB`, `MiB`; case-insensitive): `500M`, `1.5G`, `65536`.
/// `stats` shows the limits in the same binary units (`1.5 GiB`).
enum StorageLimitOptions {
    /// The two options, in help order.
    static let options: [OptionSpec] = [
        OptionSpec("max-disk", .value("size"), help: "Most bytes of bodies on disk, complete and partial, > 0: 65536, 512K, 10MB, 1.5G (K/M/G = 1024-based, also as KiB/MiB/GiB; default 1G); over it the least recently used unpinned ones are evicted."),
        OptionSpec("max-entry", .value("size"), help: "Largest body stored, > 0, same units, at most max-disk (default: max-disk/8); a larger one, or one that does not fit beside the pinned entries, is delivered with a warning, not stored, and nothing is evicted (an interrupted download of it is still kept, within max-disk, to resume); prefetch lists it as failed and stops downloading it once it is known to be larger."),
        OptionSpec("max-filesize", .value("size"), help: "Largest body fetched, > 0, same units (like curl's): one announced larger fails at once, any other once it grows past it; nothing stored: get exits 63, prefetch lists the URL as failed, the driver answers an error line (default: no limit; a body of unknown length still stops at 4 GiB)."),
    ]

    /// The two options for `stats`, which reports against the limits and removes nothing.
    static let reportingOptions: [OptionSpec] = [
        OptionSpec("max-disk", .value("size"), help: "Report against this limit of bytes on disk (same units as get's; default 1G); stats removes nothing."),
        OptionSpec("max-entry", .value("size"), help: "Report this per-entry limit (default: max-disk/8); stats removes nothing."),
    ]

    /// The limits given on the command line (`nil` = not given).
    struct Limits: Sendable {
        var maxDisk: Int64?
        var maxEntry: Int64?
        /// `--max-filesize`: the cap on one response body (`maxResponseBodyBytes`).
        var maxFileSize: Int64?

        /// The warning when `--max-entry` was given above the disk limit in force (the entry limit is then the disk
        /// limit: a body larger than the whole cache is never stored); nil otherwise.
        func entryOverDiskNote(configured: CacheStore.Configuration) -> String? {
            guard let maxEntry, let disk = configured.maxDiskBytes, maxEntry > disk else { return nil }
            return "Warning: --max-entry \(Formatting.binaryBytes(maxEntry)) is over the disk limit "
                + "\(Formatting.binaryBytes(disk)) (--max-disk); the entry limit is \(Formatting.binaryBytes(disk))"
        }

        /// Sets the given limits on `configuration`.
        func apply(to configuration: inout DownloadCache.Configuration) {
            if let maxDisk { configuration.maxDiskBytes = maxDisk }
            if let maxEntry { configuration.maxEntryBytes = maxEntry }
            if let maxFileSize { configuration.maxResponseBodyBytes = maxFileSize }
        }
    }

    /// Reads `--max-disk`, `--max-entry` and `--max-filesize` (the last only where the command has it).
    /// - Throws: ``UsageError`` naming the option and the bad value.
    static func parse(_ parsed: ParsedArguments) throws(UsageError) -> Limits {
        Limits(maxDisk: try parsed.value("max-disk").map { text throws(UsageError) in try size(text, option: "max-disk") },
               maxEntry: try parsed.value("max-entry").map { text throws(UsageError) in try size(text, option: "max-entry") },
               maxFileSize: try parsed.value("max-filesize").map { text throws(UsageError) in
                   try size(text, option: "max-filesize")
               })
    }

    /// A byte count greater than 0: a number (a decimal fraction with a suffix, e.g. `1.5G`) with an optional
    /// suffix `K`, `M` or `G` — powers of 1024 whether written `M`, `MB` or `MiB` — or `B`, case-insensitive:
    /// `65536`, `512k`, `10MB`, `10MiB`, `1.5G`. A fraction of a byte is rounded down.
    /// - Throws: ``UsageError`` saying why: not a number with one of those suffixes, 0 or negative, a fraction
    ///   of a byte without a suffix, or more than 2^62 bytes.
    static func size(_ text: String, option: String) throws(UsageError) -> Int64 {
        let example = "expected a byte count such as 65536, 512K, 10MB, 10MiB or 1.5G (K/M/G are powers of 1024)"
        var rest = Substring(text.lowercased())
        let multipliers: [Character: Int64] = ["k": 1 << 10, "m": 1 << 20, "g": 1 << 30]
        var multiplier: Int64 = 1
        if rest.hasSuffix("ib") {
            rest = rest.dropLast(2)
            guard let unit = rest.last, let factor = multipliers[unit] else {
                throw UsageError("invalid value '\(text)' for '--\(option)': \(example)")
            }
            multiplier = factor
            rest = rest.dropLast()
        } else {
            if rest.hasSuffix("b") { rest = rest.dropLast() }
            if let unit = rest.last, let factor = multipliers[unit] {
                multiplier = factor
                rest = rest.dropLast()
            }
        }
        if rest.hasPrefix("-") {
            throw UsageError("invalid value '\(text)' for '--\(option)': a size must be greater than 0")
        }
        let parts = rest.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts.first ?? ""
        let fraction = parts.count > 1 ? parts[1] : ""
        guard !whole.isEmpty, whole.allSatisfy({ $0.isASCII && $0.isNumber }),
              parts.count == 1 || (!fraction.isEmpty && fraction.allSatisfy({ $0.isASCII && $0.isNumber })),
              let count = Int64(whole), count <= (Int64(1) << 62) / multiplier else {
            throw UsageError("invalid value '\(text)' for '--\(option)': \(example)")
        }
        if !fraction.isEmpty, multiplier == 1 {
            throw UsageError("invalid value '\(text)' for '--\(option)': a byte count without K/M/G is a whole number")
        }
        // The fraction times the multiplier (at most 2^30): exact enough in a Double, rounded down to whole bytes.
        let part = fraction.isEmpty ? 0 : Int64((Double("0." + fraction) ?? 0) * Double(multiplier))
        let bytes = count * multiplier + part
        guard bytes > 0 else {
            throw UsageError("invalid value '\(text)' for '--\(option)': a size must be greater than 0")
        }
        return bytes
    }
}
