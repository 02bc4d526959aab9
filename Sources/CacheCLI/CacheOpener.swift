import Foundation
import DownloadCache
import CacheStore

/// Opens the ``DownloadCache`` a command works on, turning a store that cannot open into exit 1.
enum CacheOpener {
    /// Opens the cache at `location`; storage problems the cache logs go to `console`'s stderr.
    /// - Throws: ``CommandFailure`` ("storage error: ...") when the store cannot be opened at all.
    static func open(_ location: CacheLocation, console: Console) throws(CommandFailure) -> DownloadCache {
        var configuration = DownloadCache.Configuration(directory: location.directory, namespace: location.namespace)
        configuration.log = { message in console.err("dlcache: \(message)") }
        do {
            return try DownloadCache(configuration: configuration)
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
