import Foundation
import DownloadCache

/// `dlcache rm <url>`: removes every stored variant of a URL.
public enum RemoveCommand: Command {
    /// `rm`.
    public static let name = "rm"
    /// One line for help.
    public static let abstract = "Remove a URL's stored responses."
    /// The URL.
    public static var arguments: [ArgumentSpec] { [ArgumentSpec("url", help: "The URL to remove.")] }
    /// Options.
    public static var options: [OptionSpec] { CommonOptions.location + [CommonOptions.json] }

    /// Removes the entries.
    /// - Throws: ``UsageError`` for a bad URL, ``CommandFailure`` when nothing is stored or the store fails.
    public static func run(_ parsed: ParsedArguments, context: CommandContext) async throws -> Int32 {
        let url = try CacheOpener.url(parsed.positionals[0])
        let cache = try CacheOpener.open(parsed, context: context)
        let removed: Int
        do { removed = try cache.removeEntries(for: url) } catch {
            throw CommandFailure("storage error: cannot remove \(url.absoluteString): \(ErrorText.describe(error))")
        }
        guard removed > 0 else { throw CommandFailure("not cached: nothing stored for \(url.absoluteString)") }
        if parsed.flag("json") {
            context.console.out(try JSONOutput.line(["url": url.absoluteString, "removed": removed] as [String: Any]))
        } else {
            context.console.out("removed \(removed) \(removed == 1 ? "entry" : "entries") for \(url.absoluteString)")
        }
        return 0
    }
}

/// `dlcache pin <url>` and `dlcache unpin <url>` share this logic.
enum PinAction {
    /// Pins or unpins every stored variant of the URL and reports it.
    /// - Throws: ``UsageError`` for a bad URL, ``CommandFailure`` when nothing is stored or the store fails.
    static func run(_ pinned: Bool, _ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let url = try CacheOpener.url(parsed.positionals[0])
        let cache = try CacheOpener.open(parsed, context: context)
        let changed: Int
        do { changed = try cache.setPinned(pinned, forEntriesOf: url) } catch {
            throw CommandFailure("storage error: cannot \(pinned ? "pin" : "unpin") \(url.absoluteString): \(ErrorText.describe(error))")
        }
        guard changed > 0 else { throw CommandFailure("not cached: nothing stored for \(url.absoluteString)") }
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
public enum PinCommand: Command {
    /// `pin`.
    public static let name = "pin"
    /// One line for help.
    public static let abstract = "Pin a URL's stored responses so limits never evict them."
    /// The URL.
    public static var arguments: [ArgumentSpec] { [ArgumentSpec("url", help: "The URL to pin.")] }
    /// Options.
    public static var options: [OptionSpec] { CommonOptions.location + [CommonOptions.json] }
    /// Pins the entries.
    /// - Throws: ``UsageError`` for a bad URL, ``CommandFailure`` when nothing is stored or the store fails.
    public static func run(_ parsed: ParsedArguments, context: CommandContext) async throws -> Int32 {
        try PinAction.run(true, parsed, context: context)
    }
}

/// `dlcache unpin <url>`: makes entries evictable again.
public enum UnpinCommand: Command {
    /// `unpin`.
    public static let name = "unpin"
    /// One line for help.
    public static let abstract = "Unpin a URL's stored responses."
    /// The URL.
    public static var arguments: [ArgumentSpec] { [ArgumentSpec("url", help: "The URL to unpin.")] }
    /// Options.
    public static var options: [OptionSpec] { CommonOptions.location + [CommonOptions.json] }
    /// Unpins the entries.
    /// - Throws: ``UsageError`` for a bad URL, ``CommandFailure`` when nothing is stored or the store fails.
    public static func run(_ parsed: ParsedArguments, context: CommandContext) async throws -> Int32 {
        try PinAction.run(false, parsed, context: context)
    }
}
