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
    /// `sharedTier` true reads `--redis` / `$DLCACHE_REDIS` (the fetching commands).
    static func open(_ parsed: ParsedArguments, context: CommandContext, create: Bool = false, sharedTier: Bool = false,
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
        // A --max-disk below what is stored takes effect now, not at the next store: least recently used
        // unpinned entries (partials first) are evicted down to it; pinned ones stay.
        if limits.maxDisk != nil, cache.isCacheAvailable {
            do { try cache.store.trim() } catch {
                context.console.err("dlcache: cannot trim the cache to --max-disk: \(ErrorText.oneLine(ErrorText.describe(error)))")
            }
        }
        return cache
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
