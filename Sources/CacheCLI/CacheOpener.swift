import Foundation
import DownloadCache
import CacheStore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opens the ``DownloadCache`` a command works on, turning a store that cannot open into exit 1.
enum CacheOpener {
    /// Opens the cache at `location`; storage problems the cache logs go to `console`'s stderr.
    /// - Throws: ``CommandFailure`` ("storage error: ...") when the store cannot be opened at all.
    static func open(_ location: CacheLocation, console: Console) throws(CommandFailure) -> DownloadCache {
        var configuration = DownloadCache.Configuration(directory: location.directory, namespace: location.namespace)
        configuration.log = { message in console.err("dlcache: \(message)") }
        do {
            let cache = try DownloadCache(configuration: configuration)
            OpenedCaches.register(cache)
            return cache
        } catch {
            throw CommandFailure("storage error: cannot open cache '\(location.directory.path)' namespace '\(location.namespace)': \(error)")
        }
    }

    /// Resolves `--cache-dir`/`--namespace` from `parsed` and opens that cache.
    /// - Throws: ``UsageError`` for a bad location, ``CommandFailure`` when the store cannot open.
    static func open(_ parsed: ParsedArguments, context: CommandContext) throws -> DownloadCache {
        let location = try CacheLocation.resolve(parsed, environment: context.environment)
        return try open(location, console: context.console)
    }

    /// Parses a command-line URL: absolute http or https with a host.
    /// - Throws: ``UsageError`` naming the bad value.
    static func url(_ text: String, what: String = "URL") throws(UsageError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else {
            throw UsageError("invalid \(what) '\(text)': expected an absolute http:// or https:// URL")
        }
        return url
    }
}

/// Weak references to every cache the tool opened, so `main` can wait for them to close before `exit`.
///
/// A `DownloadCache` closes its store in `deinit` (that removes the store's live-session marker). Background work
/// that finishes just after a command returns (e.g. the coalescer's task releasing its closure) can hold the last
/// reference for a moment; exiting then would leave the marker and make the next open run unclean-shutdown recovery.
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

    /// Waits until every registered cache is deinitialised, polling every millisecond for at most `timeout` seconds.
    /// - Returns: whether all were released in time.
    @discardableResult
    static func waitUntilReleased(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let alive = boxes.withLock { list -> Bool in
                list.removeAll { $0.cache == nil }
                return !list.isEmpty
            }
            if !alive { return true }
            if Date() >= deadline { return false }
            usleep(1_000)
        }
    }
}
