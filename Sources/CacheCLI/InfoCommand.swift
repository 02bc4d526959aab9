import Foundation
import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// `dlcache info <url>`: explains what is stored for a URL and what the cache would do with it now.
package enum InfoCommand: Command {
    /// `info`.
    package static let name = "info"
    /// One line for help.
    package static let abstract = "Explain a stored response: headers, age, freshness, pinning, storage and why."
    /// The URL.
    package static var arguments: [ArgumentSpec] { [ArgumentSpec("url", help: "The URL to explain.")] }
    /// Options.
    package static var options: [OptionSpec] {
        CommonOptions.location + [
            OptionSpec("header", short: "H", .repeated("name: value"),
                       help: "Show only the variant a GET with these request headers would get (Vary, RFC 9111 4.1)."),
            CommonOptions.json,
        ]
    }

    /// The `--json` object of one stored variant.
    static func json(_ e: CacheEntryDescription) -> [String: Any] {
        var object = ListCommand.json(e)
        object["method"] = e.method
        object["statusText"] = e.statusText
        object["variant"] = e.key.variant
        object["freshnessLifetime"] = JSONOutput.seconds(e.freshnessLifetime)
        object["reason"] = e.reason
        object["path"] = JSONOutput.orNull(e.bodyFileURL?.path)
        object["storedAt"] = HTTPDate.format(e.stored.responseTime)
        object["expiresAt"] = JSONOutput.orNull(e.stored.overrideExpiry.map(HTTPDate.format))
        object["slidingLifetime"] = JSONOutput.seconds(e.stored.slidingLifetime)
        object["headers"] = e.stored.response.headers.map { [$0.name, $0.value] }
        return object
    }

    /// The text explanation of one stored variant.
    static func text(_ e: CacheEntryDescription) -> String {
        var rows: [[String]] = [
            ["url:", TerminalText.escaped(e.method == "GET" ? e.url : "\(e.method) \(e.url)")],
            ["status:", "\(e.status) \(TerminalText.escaped(e.statusText))"],
        ]
        if !e.key.variant.isEmpty { rows.append(["variant:", TerminalText.escaped(e.key.variant)]) }
        rows += [
            ["stored:", HTTPDate.format(e.stored.responseTime)],
            ["age:", seconds(e.age)],
            ["lifetime:", seconds(e.freshnessLifetime)
                + (e.stored.overrideExpiry.map { ", caller's expiry \(HTTPDate.format($0))" } ?? "")
                + (e.stored.slidingLifetime.map { ", sliding \(Formatting.wholeSeconds($0))s" } ?? "")],
            ["state:", e.isFresh ? "fresh" : "stale"],
            ["decision:", TerminalText.escaped(e.reason)],
            ["pinned:", e.isPinned ? "yes (never evicted by limits or age)" : "no"],
            ["storage:", e.storageClass == .session
                ? "session (stored with --session: removed at next open and by 'purge --session')"
                : "permanent (kept across runs until stale and evicted, or removed)"],
            ["body:", "\(e.bytes) bytes, " + (e.bodyFileURL.map { "file \($0.path)" } ?? "inline in the index")],
        ]
        var text = Formatting.table(rows) + "headers:\n"
        // Origin bytes never reach the terminal raw (control characters are shown escaped).
        for field in e.stored.response.headers {
            text += "  \(TerminalText.escaped(field.name)): \(TerminalText.escaped(field.value))\n"
        }
        return text
    }

    /// The text explanation of a partial entry (an interrupted transfer).
    static func text(_ p: PartialDownloadDescription) -> String {
        var rows: [[String]] = [["url:", TerminalText.escaped(p.url)]]
        if !p.key.variant.isEmpty { rows.append(["variant:", TerminalText.escaped(p.key.variant)]) }
        rows += [
            ["state:", p.isInProgress ? "partial, still being received" : "partial (an interrupted transfer)"],
            ["kept:", "\(p.bytesKept)" + (p.completeLength.map { " of \($0) bytes" } ?? " bytes") + " (on disk, checksummed)"],
            ["resume:", p.validator.map { "the next get asks for the rest: Range: bytes=\(p.bytesKept)-, If-Range: "
                + TerminalText.escaped($0) } ?? "no strong validator: fetched whole"],
        ]
        return Formatting.table(rows)
    }

    /// `42s`, or `10m00s (600s)` from a minute on.
    static func seconds(_ value: TimeInterval) -> String {
        let whole = value.isFinite ? Formatting.wholeSeconds(value.rounded(.down)) : 0
        return whole < 60 ? "\(whole)s" : "\(Formatting.duration(value, rounding: .down)) (\(whole)s)"
    }

    /// Prints the explanation of every stored variant of the URL.
    /// - Throws: ``UsageError`` for a bad URL, ``CommandFailure`` when nothing is stored for it.
    package static func run(_ parsed: ParsedArguments, context: CommandContext) async throws -> Int32 {
        let url = try CacheOpener.url(parsed.positionals[0])
        let cache = try CacheOpener.open(parsed, context: context)
        var entries = cache.entryDescriptions(for: url)
        let partials = cache.partialDescriptions(for: url)
        guard !entries.isEmpty else {
            if !partials.isEmpty {
                if parsed.flag("json") {
                    context.console.out(try JSONOutput.line(partials.map(ListCommand.json)))
                } else {
                    context.console.out(partials.map(text).joined(separator: "\n"), terminator: "")
                }
                return 0
            }
            throw CommandFailure("not cached: nothing stored for \(url.absoluteString)", kind: .notCached, url: url)
        }
        if !parsed.all("header").isEmpty {
            let headers = try CacheOpener.headers(parsed.all("header"))
            let request = CacheRequest(method: "GET", url: url, headers: headers)
            entries = entries.filter { $0.method == "GET" && RFC9111.matches(stored: $0.stored, request: request) }
            guard !entries.isEmpty else {
                throw CommandFailure("not cached: no stored variant of \(url.absoluteString) matches those request headers",
                                     kind: .notCached, url: url)
            }
        }
        if parsed.flag("json") {
            context.console.out(try JSONOutput.line(entries.map(json)))
        } else {
            context.console.out(entries.map(text).joined(separator: "\n"), terminator: "")
        }
        return 0
    }
}
