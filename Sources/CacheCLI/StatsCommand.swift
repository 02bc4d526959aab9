import Foundation
import DownloadCache
import HTTPCacheSemantics
import SharedTier
import CacheStore

/// `dlcache stats`: entry count, bytes on disk and in memory, partial entries (kept bytes of interrupted
/// transfers), hits and misses (lifetime totals persisted in the cache by CacheStore, all processes together;
/// `--json` keys `hits`, `misses`, `partials`, `partialBytes`).
package enum StatsCommand: Command {
    /// `stats`.
    package static let name = "stats"
    /// One line for help.
    package static let abstract = "Show the cache's size and hit counters."
    /// No arguments.
    package static var arguments: [ArgumentSpec] { [] }
    /// Options.
    package static var options: [OptionSpec] {
        CommonOptions.location + StorageLimitOptions.reportingOptions + [SharedTierOption.statsSpec, CommonOptions.json]
    }

    /// Prints the statistics.
    /// - Throws: ``UsageError`` for a bad location, ``CommandFailure`` when the store cannot open.
    package static func run(_ parsed: ParsedArguments, context: CommandContext) async throws -> Int32 {
        let location = try CacheLocation.resolve(parsed, environment: context.environment)
        if let shared = try SharedTierOption.configuration(parsed, environment: context.environment),
           !CacheOpener.exists(location) {
            return try await sharedTierOnly(shared, location: location, parsed: parsed, context: context)
        }
        let cache = try CacheOpener.open(parsed, context: context, sharedTier: true)
        // With --redis / DLCACHE_REDIS: whether the shared tier answers now (a fetching command that found it
        // down logged that once and went on without it).
        let shared = cache.configuration.sharedTier
        let problem = shared == nil ? nil : await cache.probeSharedTier()
        let stats = cache.statistics
        let hits = stats.memoryHits + stats.diskHits
        let misses = stats.diskMisses
        let pinnedEntries = cache.store.allEntries().filter(\.isPinned)
        let pinned = pinnedEntries.count
        let pinnedBytes = pinnedEntries.reduce(Int64(0)) { $0 &+ max(0, $1.bodySize) }
        let limits = cache.store.configuration
        // Partial entries (the kept bytes of interrupted transfers) count against max disk with the entries.
        let partials = cache.store.allPartials()
        let partialBytes = partials.reduce(Int64(0)) { $0 &+ max(0, $1.verifiedBytes) }
        let (used, overflow) = stats.diskBytes.addingReportingOverflow(partialBytes)
        let overLimit = limits.maxDiskBytes.map { overflow || used > $0 } ?? false
        if parsed.flag("json") {
            var object: [String: Any] = [
                "entries": stats.entries,
                "bytes": stats.diskBytes,
                "memoryBytes": stats.memoryBytes,
                "memoryEntries": stats.memoryEntries,
                "hits": hits,
                "misses": misses,
                "pinned": pinned,
                "directory": cache.directoryURL.path,
                "maxDiskBytes": limits.maxDiskBytes.map { $0 as Any } ?? NSNull(),
                "maxEntryBytes": limits.entryByteLimit.map { $0 as Any } ?? NSNull(),
                "partials": partials.count,
                "partialBytes": partialBytes,
                "overLimit": overLimit,
            ]
            if let shared { object["sharedTier"] = sharedTierObject(shared, problem: problem) }
            context.console.out(try JSONOutput.line(object))
            return sharedTierExitCode(shared, problem: problem, context: context)
        }
        var rows = [
            ["directory:", cache.directoryURL.path],
            ["entries:", "\(stats.entries) (\(pinned) pinned)"],
            ["on disk:", "\(Formatting.bytes(stats.diskBytes)) (\(stats.diskBytes) bytes)"],
            ["partials:", "\(partials.count) (\(Formatting.bytes(partialBytes)) kept to resume interrupted downloads)"],
            ["in memory:", "\(Formatting.bytes(Int64(stats.memoryBytes))) in \(stats.memoryEntries) \(stats.memoryEntries == 1 ? "entry" : "entries")"],
            ["hits:", "\(hits) (\(stats.memoryHits) memory, \(stats.diskHits) disk; lifetime total of every process, persisted in the cache)"],
            ["misses:", "\(misses) (lifetime total)"],
            ["limits:", "max disk \(limits.maxDiskBytes.map(Self.limitText) ?? "unlimited"), max entry "
                + "\(limits.entryByteLimit.map(Self.limitText) ?? "unlimited") (this run's --max-disk / --max-entry, else the defaults)"],
        ]
        if let maxDisk = limits.maxDiskBytes, overLimit {
            // stats only reports: it never evicts, whatever --max-disk says. Partials count toward the limit.
            let counted = partialBytes > 0
                ? "entries and partials (\(Formatting.bytes(stats.diskBytes + partialBytes))) are"
                : "on disk is"
            rows.append(["over limit:", pinnedBytes > maxDisk
                ? "what is left over max disk is pinned (pinned entries are never evicted; unpin or rm them)"
                : parsed.value("max-disk") != nil
                ? "\(counted) over max disk (stats removes nothing); get, prefetch or driver given this --max-disk, or purge --max-disk SIZE, evicts the least recently used unpinned entries down to it"
                : "\(counted) over max disk; the next store, or get, prefetch or purge given --max-disk, evicts the least recently used unpinned entries down to it"])
        }
        if let shared { rows.append(sharedTierRow(shared, problem: problem, note: "; fetches work without it")) }
        context.console.out(Formatting.table(rows), terminator: "")
        return sharedTierExitCode(shared, problem: problem, context: context)
    }

    /// 0, or 1 with one `Error:` line on stderr when the shared tier asked for does not answer: the statistics
    /// were printed all the same (stdout), so a script or a monitor checking `stats --redis URL` learns that the
    /// tier is down from the exit code, while fetching commands stay 0 (they work without the tier).
    static func sharedTierExitCode(_ shared: SharedTierConfiguration?, problem: String?, context: CommandContext) -> Int32 {
        guard let shared, let problem else { return 0 }
        context.console.err("Error: shared tier \(shared.description) unavailable (\(TerminalText.escaped(ErrorText.oneLine(problem)))); "
            + "the statistics printed are the local store's, fetches work without the tier")
        return 1
    }

    /// A byte limit for the text table in the binary units `--max-disk` / `--max-entry` take: `1.0 GiB (1073741824 bytes)`.
    static func limitText(_ bytes: Int64) -> String {
        "\(Formatting.binaryBytes(bytes)) (\(bytes) bytes)"
    }

    /// `stats --redis URL` where no cache exists yet (a new machine of a fleet): the shared tier is probed all the
    /// same, and the local cache is reported as absent (nothing is created). Exit 0, or 1 when the tier does not
    /// answer, like `stats` on a cache.
    static func sharedTierOnly(_ shared: SharedTierConfiguration, location: CacheLocation, parsed: ParsedArguments,
                               context: CommandContext) async throws -> Int32 {
        let tier = SharedTier(configuration: shared, scope: "private:\(location.namespace)", log: { _ in })
        let problem = await tier.probe()
        let directory = location.directory.appendingPathComponent(location.namespace).path
        if parsed.flag("json") {
            let object: [String: Any] = ["entries": 0, "bytes": 0, "directory": directory, "cacheExists": false,
                                         "sharedTier": sharedTierObject(shared, problem: problem)]
            context.console.out(try JSONOutput.line(object))
            return sharedTierExitCode(shared, problem: problem, context: context)
        }
        let rows = [
            ["directory:", directory + " (no cache here yet)"],
            sharedTierRow(shared, problem: problem, note: ""),
        ]
        context.console.out(Formatting.table(rows), terminator: "")
        return sharedTierExitCode(shared, problem: problem, context: context)
    }

    /// The `--json` member for the shared tier: url, reachable, and the problem when it is not.
    static func sharedTierObject(_ shared: SharedTierConfiguration, problem: String?) -> [String: Any] {
        var tier: [String: Any] = ["url": shared.description, "reachable": problem == nil]
        if let problem { tier["problem"] = problem }
        return tier
    }

    /// The text row for the shared tier; `note` follows the problem. The problem may quote the Redis server's
    /// own error text: escaped, so a hostile server cannot act on the terminal.
    static func sharedTierRow(_ shared: SharedTierConfiguration, problem: String?, note: String) -> [String] {
        ["shared tier:", shared.description + (problem.map { " unavailable (\(TerminalText.escaped($0)))\(note)" } ?? " reachable")]
    }
}
