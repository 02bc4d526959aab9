import Foundation
import DownloadCache
import HTTPCacheSemantics
import CacheStore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opens the ``DownloadCache`` a command works on, turning a store that cannot open into exit 1, and parses the
/// command-line values that say what to ask it (a URL, `-H` header fields).
enum CacheOpener {
    /// Opens the cache at `location`.
    ///
    /// The client's log lines (storage problems that never fail a call) go to `console`'s stderr only when
    /// `verbose` is true, so a plain run prints nothing but its result and `-v` stays readable. (CacheStore's own
    /// logger is not reachable from `DownloadCache.Configuration`; see the CLI report.)
    /// - Parameters:
    ///   - create: whether a missing cache may be created (`get`, `prefetch`); inspection and maintenance
    ///     commands pass false so a mistyped `--cache-dir` is reported instead of silently created.
    /// - Throws: ``CommandFailure`` ("no cache at DIR" when `create` is false and nothing is there;
    ///   "storage error: ..." when the store cannot be opened at all).
    static func open(_ location: CacheLocation, console: Console, create: Bool = true, verbose: Bool = false,
                     configure: (inout DownloadCache.Configuration) -> Void = { _ in }) throws(CommandFailure) -> DownloadCache {
        if !create { try requireExisting(location) }
        var configuration = DownloadCache.Configuration(directory: location.directory, namespace: location.namespace)
        configure(&configuration)
        if verbose {
            configuration.log = { message in console.err("dlcache: \(ErrorText.oneLine(message))") }
        } else {
            configuration.log = { _ in }
        }
        do {
            let cache = try DownloadCache(configuration: configuration)
            OpenedCaches.register(cache)
            // Fetching commands work without a cache they cannot open (the client logs why); inspection and
            // maintenance commands have nothing to work on, so they report it.
            if !create, !cache.isCacheAvailable {
                let reason = cache.readOnlyReason ?? "unavailable"
                throw CommandFailure("storage error: cannot open cache '\(location.directory.path)' namespace "
                    + "'\(location.namespace)': \(ErrorText.oneLine(reason))")
            }
            return cache
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure("storage error: cannot open cache '\(location.directory.path)' namespace "
                + "'\(location.namespace)': \(ErrorText.describe(error))")
        }
    }

    /// Whether the store directory `<root>/<namespace>` exists.
    static func exists(_ location: CacheLocation) -> Bool {
        var isDirectory: ObjCBool = false
        let store = location.directory.appendingPathComponent(location.namespace).path
        return FileManager.default.fileExists(atPath: store, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// Fails unless the store directory `<root>/<namespace>` exists.
    /// - Throws: ``CommandFailure`` `no cache at DIR` (plus the namespace when it is not `default`).
    static func requireExisting(_ location: CacheLocation) throws(CommandFailure) {
        guard exists(location) else {
            let suffix = location.namespace == "default" ? "" : " (namespace '\(location.namespace)')"
            throw CommandFailure("no cache at \(location.directory.path)\(suffix)")
        }
    }

    /// Resolves `--cache-dir`/`--namespace` from `parsed` and opens that cache (see
    /// ``open(_:console:create:verbose:)`` for `create`; `-v` turns on the client's log lines).
    /// - Throws: ``UsageError`` for a bad location, ``CommandFailure`` when there is no cache (and `create` is
    ///   false) or the store cannot open.
    /// `sharedTier` true reads `--redis` / `$DLCACHE_REDIS` (the fetching commands). `trims` true (the commands
    /// that write: `get`, `prefetch`) makes a `--max-disk` below what is stored take effect at once (``trim(_:context:)``,
    /// reported on stderr); inspection commands pass false and only report against the limits given.
    static func open(_ parsed: ParsedArguments, context: CommandContext, create: Bool = false, sharedTier: Bool = false,
                     trims: Bool = false,
                     configure: (inout DownloadCache.Configuration) -> Void = { _ in }) throws -> DownloadCache {
        let location = try CacheLocation.resolve(parsed, environment: context.environment)
        let shared = sharedTier ? try SharedTierOption.configuration(parsed, environment: context.environment) : nil
        let limits = try StorageLimitOptions.parse(parsed)
        let cache = try open(location, console: context.console, create: create, verbose: parsed.flag("verbose")) { configuration in
            configuration.sharedTier = shared
            configuration.now = context.environment.now
            limits.apply(to: &configuration)
            configure(&configuration)
        }
        if !parsed.flag("silent"), let note = limits.entryOverDiskNote(configured: cache.store.configuration) {
            context.console.err(note)
        }
        if trims, let maxDisk = parsed.value("max-disk"), limits.maxDisk != nil,
           let removed = trim(cache, context: context), removed.count > 0 {
            context.console.err("dlcache: trimmed the cache to --max-disk \(maxDisk): removed \(removed.description), "
                                + "least recently used first (pinned entries are kept)")
        }
        return cache
    }

    /// What a trim removed: complete entries and partial ones (kept bytes of interrupted transfers), and their bytes.
    struct Removed: Sendable, Equatable {
        var entries = 0
        var partials = 0
        var bytes: Int64 = 0

        /// Entries and partials removed.
        var count: Int { entries + partials }

        /// `3 entries and 1 partial (400.0 KB)`, `1 entry (100.0 KB)`.
        var description: String {
            var parts: [String] = []
            if entries > 0 || partials == 0 { parts.append("\(entries) \(entries == 1 ? "entry" : "entries")") }
            if partials > 0 { parts.append("\(partials) partial\(partials == 1 ? "" : "s")") }
            return parts.joined(separator: " and ") + " (\(Formatting.bytes(bytes)))"
        }
    }

    /// Makes the configured limits hold now, not at the next store (`CacheStore.trim()`): unused entries past
    /// their maximum age, then least recently used unpinned entries (partials first) down to `--max-disk`;
    /// pinned ones stay. A failure is reported on stderr and the command goes on.
    /// - Returns: what was removed (counted from the index before and after), or nil when the store could not
    ///   be trimmed (unavailable, read-only, or the trim failed).
    static func trim(_ cache: DownloadCache, context: CommandContext) -> Removed? {
        guard cache.isCacheAvailable, !cache.store.isReadOnly else { return nil }
        func census() -> Removed {
            let stats = cache.statistics
            let partials = cache.store.allPartials()
            return Removed(entries: stats.entries, partials: partials.count,
                           bytes: stats.diskBytes &+ partials.reduce(0) { $0 &+ max(0, $1.verifiedBytes) })
        }
        let before = census()
        do { try cache.store.trim() } catch {
            context.console.err("dlcache: cannot trim the cache to --max-disk: \(ErrorText.oneLine(ErrorText.describe(error)))")
            return nil
        }
        let after = census()
        return Removed(entries: max(0, before.entries - after.entries), partials: max(0, before.partials - after.partials),
                       bytes: max(0, before.bytes &- after.bytes))
    }

    /// Parses a command-line URL: absolute http or https with a host and, if given, a port from 1 to 65535.
    /// - Throws: ``UsageError`` naming the bad value (one line).
    static func url(_ text: String, what: String = "URL") throws(UsageError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else {
            throw UsageError("invalid \(what) '\(text)': expected an absolute http:// or https:// URL")
        }
        if let port = url.port, !(1...65535).contains(port) {
            throw UsageError("invalid \(what) '\(text)': port \(port) is out of range (1-65535)")
        }
        return url
    }

    /// Parses `-H` values (`Name: value`, optional white space around the value trimmed) into header fields, in
    /// the order given.
    /// - Throws: ``UsageError`` naming the first line without a colon, with an empty name or with white space in
    ///   the name.
    static func headers(_ lines: [String]) throws(UsageError) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                  !line[..<colon].contains(where: { $0 == " " || $0 == "\t" }) else {
                throw UsageError("invalid value '\(line)' for '-H': expected 'Name: value'")
            }
            headers.add(String(line[..<colon]), HTTPHeaders.trimOWS(String(line[line.index(after: colon)...])))
        }
        return headers
    }
}

/// Weak references to every cache the tool opened, so `main` can close them before `exit`.
///
/// Closing explicitly (``DownloadCache/close()``: waits for background revalidations, then closes the store, which
/// flushes its counters, removes its live-session marker and unlocks) makes a normal exit a clean shutdown whatever
/// still holds a reference; otherwise the next open would run unclean-shutdown recovery.
enum OpenedCaches {
    private final class WeakBox: @unchecked Sendable {
        weak var cache: DownloadCache?
        init(_ cache: DownloadCache) { self.cache = cache }
    }
    private static let boxes = Mutex<[WeakBox]>([])

    /// Remembers `cache` weakly.
    static func register(_ cache: DownloadCache) {
        boxes.withLock { $0.append(WeakBox(cache)) }
    }

    /// Closes every registered cache that is still alive (each waits for its background work first) and forgets them.
    static func closeAll() async {
        let alive = boxes.withLock { list -> [DownloadCache] in
            let caches = list.compactMap(\.cache)
            list.removeAll()
            return caches
        }
        for cache in alive { await cache.close() }
    }
}
