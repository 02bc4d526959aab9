import Foundation
import DownloadCache

/// `dlcache ls`: one line (or JSON object) per stored response.
public enum ListCommand: Command {
    /// `ls`.
    public static let name = "ls"
    /// One line for help.
    public static let abstract = "List the stored responses."
    /// No arguments.
    public static var arguments: [ArgumentSpec] { [] }
    /// Options.
    public static var options: [OptionSpec] { CommonOptions.location + [CommonOptions.json] }

    /// The `--json` object of one entry: url, status, bytes, age, fresh, pinned, storage, namespace.
    static func json(_ entry: CacheEntryDescription) -> [String: Any] {
        [
            "url": entry.url,
            "status": entry.status,
            "bytes": entry.bytes,
            "age": JSONOutput.seconds(entry.age),
            "fresh": entry.isFresh,
            "pinned": entry.isPinned,
            "storage": entry.storageClass.rawValue,
            "namespace": entry.namespace,
        ]
    }

    /// Prints the entries, most recently used first.
    /// - Throws: ``UsageError`` for a bad location, ``CommandFailure`` when the store cannot open.
    public static func run(_ parsed: ParsedArguments, context: CommandContext) async throws -> Int32 {
        let cache = try CacheOpener.open(parsed, context: context)
        let entries = cache.entryDescriptions()
        if parsed.flag("json") {
            context.console.out(try JSONOutput.line(entries.map(json)))
            return 0
        }
        var rows = [["STATUS", "BYTES", "AGE", "STATE", "PIN", "STORAGE", "URL"]]
        for entry in entries {
            rows.append([
                "\(entry.status)", "\(entry.bytes)", Formatting.duration(entry.age),
                entry.isFresh ? "fresh" : "stale", entry.isPinned ? "pin" : "-",
                entry.storageClass.rawValue, entry.method == "GET" ? entry.url : "\(entry.method) \(entry.url)",
            ])
        }
        context.console.out(Formatting.table(rows), terminator: "")
        let total = entries.reduce(Int64(0)) { $0 + $1.bytes }
        context.console.out("\(entries.count) \(entries.count == 1 ? "entry" : "entries"), \(Formatting.bytes(total))")
        return 0
    }
}
