import Foundation
import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// `dlcache rm <url>`: removes every stored variant of a URL.
package enum RemoveCommand: Command {
    /// `rm`.
    package static let name = "rm"
    /// One line for help.
    package static let abstract = "Remove a URL's stored responses and its partial download."
    /// The URL (or `--prefix`).
    package static var arguments: [ArgumentSpec] {
        [ArgumentSpec("url", help: "The URL to remove (or give --prefix).", optional: true)]
    }
    /// Options.
    package static var options: [OptionSpec] {
        CommonOptions.location + [
            OptionSpec("prefix", .value("url"), help: "Remove every stored URL that starts with this text (e.g. http://host/docs/)."),
            OptionSpec("dry-run", help: "With --prefix: list what would be removed, remove nothing."),
            CommonOptions.json,
        ]
    }

    /// Removes the entries.
    /// - Throws: ``UsageError`` for a bad URL, ``CommandFailure`` when nothing is stored or the store fails.
    package static func run(_ parsed: ParsedArguments, context: CommandContext) async throws -> Int32 {
        if let prefix = parsed.value("prefix") {
            guard parsed.positionals.isEmpty else { throw UsageError("give either <url> or '--prefix', not both") }
            return try removePrefix(prefix, parsed: parsed, context: context)
        }
        guard let given = parsed.positionals.first else { throw UsageError("missing <url> (or '--prefix <url>')") }
        if parsed.flag("dry-run") { throw UsageError("'--dry-run' needs '--prefix <url>'") }
        let url = try CacheOpener.url(given)
        let cache = try CacheOpener.open(parsed, context: context) { $0.opensToFreeSpace = true }
        let removed: Int
        let partials: Int
        do {
            (removed, partials) = try remove(url, cache: cache, dryRun: false)
        } catch {
            throw CommandFailure("storage error: cannot remove \(url.absoluteString): \(ErrorText.describe(error))",
                                 kind: .storage, url: url)
        }
        guard removed + partials > 0 else {
            throw CommandFailure("not cached: nothing stored for \(url.absoluteString)", kind: .notCached, url: url)
        }
        if parsed.flag("json") {
            context.console.out(try JSONOutput.line(["url": url.absoluteString, "removed": removed,
                                                     "removedPartials": partials] as [String: Any]))
        } else {
            var what = removed > 0 || partials == 0 ? ["\(removed) \(removed == 1 ? "entry" : "entries")"] : []
            if partials > 0 { what.append("\(partials) partial\(partials == 1 ? "" : "s") (kept bytes of an interrupted download)") }
            context.console.out("removed \(what.joined(separator: " and ")) for \(url.absoluteString)")
        }
        return 0
    }

    /// Removes (with `dryRun`: only counts) the stored entries of `url` and its partial entries (the kept bytes of
    /// an interrupted download, which are the URL's as `ls` shows).
    /// - Throws: `CacheStoreError` when the index cannot be written.
    static func remove(_ url: URL, cache: DownloadCache, dryRun: Bool) throws -> (entries: Int, partials: Int) {
        let partials = cache.partialDescriptions(for: url)
        if dryRun { return (cache.entryDescriptions(for: url).count, partials.count) }
        let entries = try cache.removeEntries(for: url)
        for partial in partials { try cache.store.removePartial(for: partial.key) }
        return (entries, partials.count)
    }

    /// `rm --prefix`: removes (or with `--dry-run` lists) every stored URL starting with `prefix`, in URL order.
    /// - Throws: ``UsageError`` for an empty prefix, ``CommandFailure`` when nothing matches or the store fails.
    static func removePrefix(_ prefix: String, parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        guard !prefix.isEmpty else { throw UsageError("invalid value '' for '--prefix': expected the start of a URL") }
        let cache = try CacheOpener.open(parsed, context: context) { $0.opensToFreeSpace = true }
        let stored = cache.entryDescriptions().map(\.url) + cache.partialDescriptions().map(\.url)
        let urls = Set(stored.filter { $0.hasPrefix(prefix) }).sorted()
        guard !urls.isEmpty else { throw CommandFailure("not cached: nothing stored under \(prefix)", kind: .notCached) }
        let dryRun = parsed.flag("dry-run")
        var removed: [(url: String, entries: Int, partials: Int)] = []
        for text in urls {
            guard let url = URL(string: text) else { continue }
            do {
                let (entries, partials) = try remove(url, cache: cache, dryRun: dryRun)
                removed.append((text, entries, partials))
            } catch {
                throw CommandFailure("storage error: cannot remove \(text): \(ErrorText.describe(error))")
            }
        }
        let total = removed.reduce(0) { $0 + $1.entries }
        let partials = removed.reduce(0) { $0 + $1.partials }
        if parsed.flag("json") {
            let object: [String: Any] = ["prefix": prefix, "dryRun": dryRun, "removed": total, "removedPartials": partials,
                                         "urls": removed.map { ["url": $0.url, "entries": $0.entries, "partials": $0.partials] as [String: Any] }]
            context.console.out(try JSONOutput.line(object))
        } else {
            for item in removed { context.console.out("\(dryRun ? "would remove" : "removed") \(TerminalText.escaped(item.url))") }
            let partialText = partials == 0 ? "" : " and \(partials) partial\(partials == 1 ? "" : "s")"
            context.console.out("\(dryRun ? "would remove" : "removed") \(total) \(total == 1 ? "entry" : "entries")\(partialText) "
                + "(\(removed.count) \(removed.count == 1 ? "URL" : "URLs")) under \(TerminalText.escaped(prefix))")
        }
        return 0
    }
}

/// `dlcache pin <url>` and `dlcache unpin <url>`: one URL argument, the location options and `--json`, and one
/// action that differs only in the pinned state it sets.
package protocol PinningCommand: Command {
    /// The pinned state the command sets: `true` for `pin`, `false` for `unpin`.
    static var pins: Bool { get }
}

extension PinningCommand {
    /// The URL.
    package static var arguments: [ArgumentSpec] { [ArgumentSpec("url", help: "The URL to \(name).")] }
    /// Options.
    package static var options: [OptionSpec] { CommonOptions.location + [CommonOptions.json] }

    /// Pins or unpins every stored variant of the URL and reports it.
    /// - Throws: ``UsageError`` for a bad URL, ``CommandFailure`` when nothing is stored or the store fails.
    package static func run(_ parsed: ParsedArguments, context: CommandContext) async throws -> Int32 {
        let pinned = pins
        let url = try CacheOpener.url(parsed.positionals[0])
        let cache = try CacheOpener.open(parsed, context: context)
        let changed: Int
        do { changed = try cache.setPinned(pinned, forEntriesOf: url) } catch {
            throw CommandFailure("storage error: cannot \(name) \(url.absoluteString): \(ErrorText.describe(error))",
                                 kind: .storage, url: url)
        }
        guard changed > 0 else {
            // A partial (interrupted transfer) is not an entry yet: say so rather than "nothing stored".
            if let kept = cache.partialDescriptions(for: url).max(by: { $0.bytesKept < $1.bytesKept }) {
                let of = kept.completeLength.map { " of \(Formatting.bytes($0))" } ?? ""
                throw CommandFailure("not cached: only a partial download of \(TerminalText.escaped(url.absoluteString)) "
                    + "is kept (\(Formatting.bytes(kept.bytesKept))\(of) from an interrupted transfer); a partial cannot be "
                    + "\(name)ned: `dlcache get\(pinned ? " --pin" : "") URL` resumes it\(pinned ? " and pins the complete response" : "")",
                                     kind: .notCached, url: url)
            }
            throw CommandFailure("not cached: nothing stored for \(url.absoluteString)", kind: .notCached, url: url)
        }
        if parsed.flag("json") {
            let object: [String: Any] = ["url": url.absoluteString, "pinned": pinned, "entries": changed]
            context.console.out(try JSONOutput.line(object))
        } else {
            context.console.out("\(pinned ? "pinned" : "unpinned") \(changed) \(changed == 1 ? "entry" : "entries") for \(url.absoluteString)")
        }
        return 0
    }
}

/// `dlcache pin <url>`: pinned entries are never evicted by size, count or age limits.
package enum PinCommand: PinningCommand {
    /// `pin`.
    package static let name = "pin"
    /// One line for help.
    package static let abstract = "Pin a URL's stored responses so limits never evict them."
    /// Sets entries pinned.
    package static let pins = true
}

/// `dlcache unpin <url>`: makes entries evictable again.
package enum UnpinCommand: PinningCommand {
    /// `unpin`.
    package static let name = "unpin"
    /// One line for help.
    package static let abstract = "Unpin a URL's stored responses."
    /// Sets entries unpinned.
    package static let pins = false
}
