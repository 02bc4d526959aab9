import DownloadCache
import CacheStore
import HTTPCacheSemantics
import SharedTier
import Foundation

/// `--redis URL` / `$DLCACHE_REDIS`: the shared tier of the fetching commands (`get`, `prefetch`, `driver`) and
/// what `stats` reports on.
enum SharedTierOption {
    /// `--redis URL`.
    static let spec = OptionSpec("redis", .value("url"),
        help: "Shared tier on Redis: redis://[user:password@]host:port/db or unix:///path.sock (default: $DLCACHE_REDIS); a failing Redis never fails a download.")
    /// `--redis URL` as `stats` reads it.
    static let statsSpec = OptionSpec("redis", .value("url"),
        help: "Also report whether this shared tier (Redis) answers now (default: $DLCACHE_REDIS).")

    /// The shared tier named by `--redis`, else by a non-empty `$DLCACHE_REDIS`; `nil` when neither is given.
    /// - Throws: ``UsageError`` for a URL that is not a Redis URL (the message never contains its password).
    static func configuration(_ parsed: ParsedArguments, environment: CommandEnvironment) throws(UsageError) -> SharedTierConfiguration? {
        let option = parsed.value("redis")
        let text = option ?? environment.variables["DLCACHE_REDIS"].flatMap { $0.isEmpty ? nil : $0 }
        guard let text else { return nil }
        let source = option != nil ? "--redis" : "DLCACHE_REDIS"
        do {
            return try SharedTierConfiguration.redis(text)
        } catch {
            throw UsageError("invalid value for '\(source)': \(error.detail); expected redis://[user:password@]host:port/db or unix:///path.sock")
        }
    }
}
