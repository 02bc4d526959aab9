import Foundation
import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// `dlcache ls`: one line (or JSON object) per stored response.
package enum ListCommand: Command {
    /// `ls`.
    package static let name = "ls"
    /// One line for help.
    package static let abstract = "List the stored responses."
    /// No arguments.
    package static var arguments: [ArgumentSpec] { [] }
    /// Options.
    package static var options: [OptionSpec] { CommonOptions.location + [CommonOptions.json] }

    /// The `--json` object of one entry: url, status, bytes, age, fresh, pinned, storage, namespace, and
    /// variant (the RFC 9111 §4.1 secondary key, `""` when the response has no `Vary`).
    static func json(_ entry: CacheEntryDescription) -> [String: Any] {
        [
            "url": entry.url,
            "variant": variant(entry.key.variant),
            "status": entry.status,
            "bytes": entry.bytes,
            "age": JSONOutput.seconds(entry.age),
            "fresh": entry.isFresh,
            "pinned": entry.isPinned,
            "storage": entry.storageClass.rawValue,
            "namespace": entry.namespace,
        ]
    }

    /// Prints the entries sorted by URL, then variant (secondary key), then method, so identical runs print
    /// identical lists.
    /// - Throws: ``UsageError`` for a bad location, ``CommandFailure`` when the store cannot open.
    package static func run(_ parsed: ParsedArguments, context: CommandContext) async throws -> Int32 {
        let cache = try CacheOpener.open(parsed, context: context)
        let entries = cache.entryDescriptions().sorted {
            ($0.url, $0.key.variant, $0.method) < ($1.url, $1.key.variant, $1.method)
        }
        let partials = cache.partialDescriptions().sorted { ($0.url, $0.key.variant) < ($1.url, $1.key.variant) }
        if parsed.flag("json") {
            context.console.out(try JSONOutput.line(entries.map(json) + partials.map(json)))
            return 0
        }
        // Vary variants of one URL would be identical rows: when any URL has several, a VARIANT column tells them apart.
        let variantCounts = Dictionary(entries.map { ($0.key.primary, 1) }, uniquingKeysWith: +)
        let showVariants = variantCounts.values.contains { $0 > 1 }
        var rows = [["STATUS", "BYTES", "AGE", "STATE", "PIN", "STORAGE"] + (showVariants ? ["VARIANT"] : []) + ["URL"]]
        for entry in entries {
            var row = [
                "\(entry.status)", "\(entry.bytes)", Formatting.duration(entry.age, rounding: .down),
                entry.isFresh ? "fresh" : "stale", entry.isPinned ? "pin" : "-", entry.storageClass.rawValue,
            ]
            if showVariants {
                let several = (variantCounts[entry.key.primary] ?? 0) > 1
                row.append(several && !entry.key.variant.isEmpty ? TerminalText.escaped(shortVariant(entry.key.variant)) : "-")
            }
            // The stored URL and method are read from the index, which another program may have edited.
            row.append(TerminalText.escaped(entry.method == "GET" ? entry.url : "\(entry.method) \(entry.url)"))
            rows.append(row)
        }
        for partial in partials {
            let of = partial.completeLength.map { "/\($0)" } ?? ""
            var row = ["-", "\(partial.bytesKept)\(of)", "-", partial.isInProgress ? "receiving" : "partial", "-", "-"]
            if showVariants { row.append("-") }
            row.append(TerminalText.escaped(partial.url))
            rows.append(row)
        }
        context.console.out(Formatting.table(rows), terminator: "")
        let total = entries.reduce(Int64(0)) { $0 + $1.bytes }
        var summary = "\(entries.count) \(entries.count == 1 ? "entry" : "entries"), \(Formatting.bytes(total))"
        if !partials.isEmpty {
            let kept = partials.reduce(Int64(0)) { $0 + $1.bytesKept }
            summary += "; \(partials.count) partial\(partials.count == 1 ? "" : "s"), \(Formatting.bytes(kept)) kept to resume"
        }
        context.console.out(summary)
        return 0
    }

    /// The `--json` object of a partial entry (an interrupted transfer): url, variant, `"partial": true`, bytes
    /// kept, the complete length (null when unknown), whether a transfer is still receiving it, namespace.
    static func json(_ partial: PartialDownloadDescription) -> [String: Any] {
        [
            "url": partial.url,
            "variant": variant(partial.key.variant),
            "partial": true,
            "bytes": partial.bytesKept,
            "completeLength": JSONOutput.orNull(partial.completeLength),
            "receiving": partial.isInProgress,
        ]
    }

    /// A secondary key on one line: its `name:value` lines joined by `; `.
    static func variant(_ key: String) -> String {
        key.split(separator: "\n", omittingEmptySubsequences: true).joined(separator: "; ")
    }

    /// The short form of a secondary key for the table: ``variant(_:)`` cut to 40 characters with `…`.
    static func shortVariant(_ key: String) -> String {
        let text = variant(key)
        return text.count <= 40 ? text : String(text.prefix(39)) + "…"
    }
}
