import Foundation
import DownloadCache
import HTTPCacheSemantics
import CacheStore

/// `dlcache purge --expired|--session|--all|--max-disk SIZE`: removes a whole class of entries, or trims the
/// cache to a size (least recently used unpinned entries first, as the limit evicts them).
package enum PurgeCommand: Command {
    /// `purge`.
    package static let name = "purge"
    /// One line for help.
    package static let abstract = "Remove expired (stale, unpinned), session, or all entries, or trim to a size."
    /// No arguments.
    package static var arguments: [ArgumentSpec] { [] }
    /// Options.
    package static var options: [OptionSpec] {
        CommonOptions.location + [
            OptionSpec("expired", help: "Remove entries that are stale (RFC 9111) and not pinned."),
            OptionSpec("session", help: "Remove session entries."),
            OptionSpec("all", help: "Remove every entry, pinned ones included."),
            OptionSpec("max-disk", .value("size"), help: "Evict least recently used unpinned entries until the bodies on disk fit SIZE (K/M/G as for get; get, prefetch and driver given --max-disk trim the same way; stats only reports)."),
            CommonOptions.json,
        ]
    }

    /// Purges the selected class.
    /// - Throws: ``UsageError`` unless exactly one selection is given, ``CommandFailure`` on a storage error.
    package static func run(_ parsed: ParsedArguments, context: CommandContext) async throws -> Int32 {
        let chosen = PurgeSelection.allCases.filter { parsed.flag($0.rawValue) }
        if let size = parsed.value("max-disk") {
            guard chosen.isEmpty else { throw UsageError("purge needs exactly one of --expired, --session, --all, --max-disk") }
            let cache = try CacheOpener.open(parsed, context: context) { $0.opensToFreeSpace = true }
            if cache.store.isReadOnly {
                throw CommandFailure("storage error: cannot trim the cache to --max-disk \(size): "
                    + "\(ErrorText.oneLine(cache.readOnlyReason ?? "the store is read-only"))", kind: .storage)
            }
            guard let removed = CacheOpener.trim(cache, context: context) else {
                throw CommandFailure("storage error: cannot trim the cache to --max-disk \(size)", kind: .storage)
            }
            let stats = cache.statistics
            if parsed.flag("json") {
                context.console.out(try JSONOutput.line(["entries": stats.entries, "bytes": stats.diskBytes,
                                                         "removedEntries": removed.entries,
                                                         "removedPartials": removed.partials,
                                                         "removedBytes": removed.bytes,
                                                         "maxDiskBytes": try StorageLimitOptions.size(size, option: "max-disk"),
                                                         "selection": "max-disk"] as [String: Any]))
            } else {
                context.console.out("trimmed to --max-disk \(size): removed \(removed.description); left "
                                    + "\(stats.entries) \(stats.entries == 1 ? "entry" : "entries"), "
                                    + "\(Formatting.bytes(stats.diskBytes)) on disk")
            }
            return 0
        }
        guard chosen.count == 1, let selection = chosen.first else {
            throw UsageError("purge needs exactly one of --expired, --session, --all, --max-disk")
        }
        let cache = try CacheOpener.open(parsed, context: context) { $0.opensToFreeSpace = true }
        let removed: Int
        do { removed = try cache.purge(selection) } catch {
            throw CommandFailure("storage error: purge --\(selection.rawValue) failed: \(ErrorText.describe(error))")
        }
        if parsed.flag("json") {
            context.console.out(try JSONOutput.line(["purged": removed, "selection": selection.rawValue] as [String: Any]))
        } else {
            context.console.out("purged \(removed) \(removed == 1 ? "entry" : "entries") (--\(selection.rawValue))")
        }
        return 0
    }
}

/// `dlcache verify [--repair]`: checks every body's checksum and the index against the files.
package enum VerifyCommand: Command {
    /// `verify`.
    package static let name = "verify"
    /// One line for help.
    package static let abstract = "Check every body's checksum and the index against the files."
    /// No arguments.
    package static var arguments: [ArgumentSpec] { [] }
    /// Options.
    package static var options: [OptionSpec] {
        CommonOptions.location + [
            OptionSpec("repair", help: "Fix what is wrong (drop bad entries, delete orphan files)."),
            CommonOptions.json,
        ]
    }

    /// Verifies (and maybe repairs) the store; exits 1 when problems remain.
    /// - Throws: ``UsageError`` for a bad location, ``CommandFailure`` when the store cannot open.
    package static func run(_ parsed: ParsedArguments, context: CommandContext) async throws -> Int32 {
        let cache = try CacheOpener.open(parsed, context: context)
        let repair = parsed.flag("repair")
        // Names first: a repair may delete the rows whose metadata holds the URL.
        var urls: [StoreKey: String] = [:]
        for info in cache.store.allEntries() {
            if let meta = StoredEntryMetadata.decode(info.metadata) { urls[info.key] = meta.url }
        }
        let report = cache.verify(repair: repair)
        let problems = report.problems.map { problem -> (url: String?, kind: String, detail: String, kept: Bool) in
            let url = problem.key.flatMap { urls[$0] ?? $0.primary }
            return (url, problem.kind, problem.detail, problem.isKept)
        }
        // A repair succeeded when every problem was fixed or deliberately kept (e.g. a young file another live
        // process may be about to commit).
        let fixed = repair && report.unresolved == 0
        if parsed.flag("json") {
            let object: [String: Any] = [
                "checked": report.checked,
                "checkedPartials": report.checkedPartials,
                "ok": report.ok,
                "problems": problems.map {
                    ["url": JSONOutput.orNull($0.url), "kind": $0.kind, "detail": $0.detail, "kept": $0.kept] as [String: Any]
                },
                "repaired": report.repaired,
                "kept": report.kept,
            ]
            context.console.out(try JSONOutput.line(object))
        } else {
            for p in problems { context.console.out("\(p.kind): \(p.url.map(TerminalText.escaped) ?? "-"): \(TerminalText.escaped(p.detail))\(p.kept ? " (kept)" : "")") }
            let verdict = report.ok ? "ok" : "\(problems.count) problem\(problems.count == 1 ? "" : "s")"
            let partials = report.checkedPartials == 0 ? ""
                : " and \(report.checkedPartials) partial download\(report.checkedPartials == 1 ? "" : "s")"
            context.console.out("checked \(report.checked) \(report.checked == 1 ? "entry" : "entries")\(partials): \(verdict)"
                + (repair ? ", repaired \(report.repaired)" : "") + (report.kept > 0 ? ", kept \(report.kept)" : ""))
        }
        return report.ok || fixed ? 0 : 1
    }
}
