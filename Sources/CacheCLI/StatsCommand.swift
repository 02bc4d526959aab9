import Foundation
import DownloadCache
import CacheStore

/// `dlcache stats`: entry count, bytes on disk and in memory, hits and misses (lifetime totals persisted in the
/// cache by CacheStore, all processes together; `--json` keys `hits` and `misses`).
public enum StatsCommand: Command {
    /// `stats`.
    public static let name = "stats"
    /// One line for help.
    public static let abstract = "Show the cache's size and hit counters."
    /// No arguments.
    public static var arguments: [ArgumentSpec] { [] }
    /// Options.
    public static var options: [OptionSpec] { CommonOptions.location + [SharedTierOption.statsSpec, CommonOptions.json] }

    /// Prints the statistics.
    /// - Throws: ``UsageError`` for a bad location, ``CommandFailure`` when the store cannot open.
    public static func run(_ parsed: ParsedArguments, context: CommandContext) async throws -> Int32 {
        let cache = try CacheOpener.open(parsed, context: context, sharedTier: true)
        // With --redis / DLCACHE_REDIS: whether the shared tier answers now (a fetching command that found it
        // down logged that once and went on without it).
        let shared = cache.configuration.sharedTier
        let problem = shared == nil ? nil : await cache.probeSharedTier()
        let stats = cache.store.statistics
        let hits = stats.memoryHits + stats.diskHits
        let misses = stats.diskMisses
        let pinned = cache.store.allEntries().filter(\.isPinned).count
        if parsed.flag("json") {
            var object: [String: Any] = [
                "entries": stats.entries,
                "bytes": stats.diskBytes,
                "memoryBytes": stats.memoryBytes,
                "memoryEntries": stats.memoryEntries,
                "hits": hits,
                "misses": misses,
                "pinned": pinned,
                "directory": cache.store.directoryURL.path,
            ]
            if let shared {
                var tier: [String: Any] = ["url": shared.description, "reachable": problem == nil]
                if let problem { tier["problem"] = problem }
                object["sharedTier"] = tier
            }
            context.console.out(try JSONOutput.line(object))
            return 0
        }
        var rows = [
            ["directory:", cache.store.directoryURL.path],
            ["entries:", "\(stats.entries) (\(pinned) pinned)"],
            ["on disk:", "\(Formatting.bytes(stats.diskBytes)) (\(stats.diskBytes) bytes)"],
            ["in memory:", "\(Formatting.bytes(Int64(stats.memoryBytes))) in \(stats.memoryEntries) \(stats.memoryEntries == 1 ? "entry" : "entries")"],
            ["hits:", "\(hits) (\(stats.memoryHits) memory, \(stats.diskHits) disk; lifetime total of every process, persisted in the cache)"],
            ["misses:", "\(misses) (lifetime total)"],
        ]
        if let shared {
            rows.append(["shared tier:", shared.description + (problem.map { " unavailable (\($0)); fetches work without it" } ?? " reachable")])
        }
        context.console.out(Formatting.table(rows), terminator: "")
        return 0
    }
}
