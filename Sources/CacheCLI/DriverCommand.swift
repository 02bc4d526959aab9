import Foundation
import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// `dlcache driver`: a JSON-lines request interface on stdin/stdout, so any program (and an external HTTP
/// caching conformance suite) can fetch through the cache without linking Swift.
///
/// Each stdin line is one request, each stdout line one answer (see ``DriverRequest`` and ``DriverResponse``);
/// requests run concurrently and are answered in completion order. When stdin closes the command waits for
/// every in-flight request, answers it, and exits 0.
package enum DriverCommand: Command {
    /// `driver`.
    package static let name = "driver"
    /// One line for help.
    package static let abstract = "Answer JSON-lines requests from stdin through the cache (conformance driver)."
    /// The line formats, as help paragraphs.
    package static var discussion: String? {
        """
        Reads one JSON request per stdin line: {"id": <string|number>, "method": "GET", "url": "http://...", \
        "headers": [["Name", "value"], ...], "body": <string|null>, "bodyFile": <true|false>} (method defaults to GET, \
        headers to none, body to null, bodyFile to false). Writes one JSON answer per stdout line: {"id": <same>, "status": 200, "statusText": "OK", \
        "headers": [["Name", "value"], ...], "body": "<text>"} (plus "bodyBase64": "<base64>" when the body is not \
        valid UTF-8) or {"id": <same or null>, "error": "<what failed>"}. \
        Requests run concurrently; answers come in completion order, matched by id. At most --max-in-flight \
        lines are answered at once (an answer counts until it is written): while that many are pending, no \
        further line is read, so a reader that stops reading answers stops the driver reading requests. \
        A request with "bodyFile": true, or any body over --inline-body-limit bytes, is answered with \
        "bodyFile": "<path>" instead of "body": the path is the cache's stored body file when the body is stored \
        as a file (never modified; it is removed when the entry is replaced or evicted, so open it promptly — an \
        open file stays readable), otherwise a private file (mode 0600 in a 0700 directory under the system \
        temporary directory; for a body over 8 MiB that was not stored, the download's own file in the cache's \
        tmp/ directory) that is removed when the driver exits: each such answer keeps its file until then. \
        Every request uses the \
        cache's default policy (use-protocol, RFC 9111); redirects are returned, not followed. "body" is the response \
        body decoded as UTF-8; when the body is not valid UTF-8, "body" is the lossy text (each invalid byte \
        replaced by U+FFFD) and "bodyBase64" carries the exact bytes, base64-encoded (RFC 4648, padded). \
        1xx interim responses the origin sent come as "interim": [{"headers": [...], "status": 103}, ...]; the \
        last header of every answer is this cache's Cache-Status member (RFC 9211). \
        Hop-by-hop headers and those named in \
        Connection are dropped. A request with only-if-cached that nothing stored can satisfy gets a 504 \
        (RFC 9111 5.2.1.7). A "Range" header with one byte range is answered from a stored full response (206 \
        with Content-Range, or 416) without asking the origin while it is fresh; several ranges go to the origin \
        uncached, a range of a URL with nothing stored goes to the origin and its 206 is kept as partial content \
        when it starts at byte 0 (RFC 9110 14). Blank lines are ignored; a malformed line (not JSON, not UTF-8, over 64 MiB) gets an error line; \
        a number id is echoed exactly as written, however large. When stdin closes, \
        in-flight requests are answered and background revalidations (stale-while-revalidate) finish and are \
        stored, then the command exits 0. When an answer cannot be written (the reader went away, a full disk), \
        the driver reads no further line, cancels the requests in flight and exits 23.
        """
    }
    /// No positional arguments.
    package static var arguments: [ArgumentSpec] { [] }
    /// Default of `--max-connections`: parallel exchanges per origin. Higher than the library's 6 because the
    /// driver's lines are independent requests — a slow one must not hold back the next line to the same origin.
    static let defaultMaxConnections = 64

    /// `--cache-dir`, `--namespace`, `--mode`, `--max-connections`, `--max-in-flight`, `--inline-body-limit`,
    /// `--no-stale-when-disconnected`, `--targeted-field`, `--redis`, `--max-time`, `--stall-timeout`, `--max-disk`,
    /// `--max-entry`.
    package static var options: [OptionSpec] {
        CommonOptions.location + [
            OptionSpec("mode", .value("private|shared"),
                       help: "RFC 9111 cache semantics: private (default) or shared (s-maxage, private, Authorization)."),
            OptionSpec("max-connections", .value("n"),
                       help: "Requests in flight to one origin at once, 1-1024 (default: \(defaultMaxConnections)); more wait for a slot."),
            OptionSpec("max-in-flight", .value("n"),
                       help: "Request lines answered at once, 1-65536 (default: \(DriverSessionOptions.defaultMaxInFlight)); no further line is read meanwhile."),
            OptionSpec("inline-body-limit", .value("bytes"),
                       help: "Bodies larger than this many bytes (65536, 512K, 8M; 0: every body) are answered with \"bodyFile\" (default: 8M)."),
            OptionSpec("no-stale-when-disconnected",
                       help: "Answer an unreachable origin with an error instead of a stale copy (RFC 9111 4.2.4, on by default)."),
            TargetedFieldOption.spec,
            SharedTierOption.spec,
        ] + FetchLimits.options + StorageLimitOptions.options
    }

    /// The cache mode named by `--mode`, default `.private`.
    /// - Throws: ``UsageError`` for any other value than `private` or `shared`.
    static func mode(_ parsed: ParsedArguments) throws(UsageError) -> CacheMode {
        switch parsed.value("mode") {
        case nil, "private"?: return .private
        case "shared"?: return .shared
        case let other?: throw UsageError("invalid value '\(other)' for '--mode': expected private or shared")
        }
    }

    /// Opens the cache at `location` with RFC 9111 `mode`; storage problems the cache logs go to stderr.
    ///
    /// Like `CacheOpener.open` (which has no mode parameter), the cache is registered so `CommandLineTool.main`
    /// waits for it to close before the process exits.
    /// - Throws: ``CommandFailure`` ("storage error: ...") when the store cannot be opened at all.
    static func openCache(_ location: CacheLocation, mode: CacheMode, maxConnections: Int = defaultMaxConnections,
                          console: Console, configure: (inout DownloadCache.Configuration) -> Void = { _ in })
        throws(CommandFailure) -> DownloadCache {
        var configuration = DownloadCache.Configuration(directory: location.directory, namespace: location.namespace)
        configuration.mode = mode
        configure(&configuration)
        configuration.maxConcurrentDownloads = maxConnections
        configuration.log = { message in console.err("dlcache: \(message)") }
        do {
            let cache = try DownloadCache(configuration: configuration)
            OpenedCaches.register(cache)
            return cache
        } catch {
            throw CommandFailure("storage error: cannot open cache '\(location.directory.path)' namespace '\(location.namespace)': \(ErrorText.describe(error))")
        }
    }

    /// Serves the process's standard input (read line by line as it arrives) until it closes; answers go to
    /// the console's stdout.
    /// - Throws: ``UsageError`` for a bad `--mode`, `--namespace` or cache location, ``CommandFailure`` when the
    ///   cache cannot be opened.
    package static func run(_ parsed: ParsedArguments, context: CommandContext) async throws -> Int32 {
        let mode = try mode(parsed)
        let maxConnections = try parsed.integer("max-connections", in: 1...1024) ?? defaultMaxConnections
        let limits = try FetchLimits.parse(parsed)
        let location = try CacheLocation.resolve(parsed, environment: context.environment)
        var sessionOptions = DriverSessionOptions()
        sessionOptions.limits = limits
        sessionOptions.maxInFlight = try parsed.integer("max-in-flight", in: 1...65_536) ?? sessionOptions.maxInFlight
        if let text = parsed.value("inline-body-limit") {
            // 0: every body is answered as a file; otherwise a size as every size option takes it (512K, 8M).
            sessionOptions.inlineBodyLimit = text == "0" ? 0 : try StorageLimitOptions.size(text, option: "inline-body-limit")
        }
        let noStale = parsed.flag("no-stale-when-disconnected")
        let targets = try TargetedFieldOption.targets(parsed)
        let shared = try SharedTierOption.configuration(parsed, environment: context.environment)
        let storageLimits = try StorageLimitOptions.parse(parsed)
        let cache = try openCache(location, mode: mode, maxConnections: maxConnections, console: context.console) {
            storageLimits.apply(to: &$0)
            $0.servesStaleWhenDisconnected = !noStale
            $0.targetedFields = targets
            $0.sharedTier = shared
        }
        if let note = storageLimits.entryOverDiskNote(configured: cache.store.configuration) { context.console.err(note) }
        if let maxDisk = parsed.value("max-disk"), let removed = CacheOpener.trim(cache, context: context), removed.count > 0 {
            context.console.err("dlcache: trimmed the cache to --max-disk \(maxDisk): removed \(removed.description), "
                                + "least recently used first (pinned entries are kept)")
        }
        let session = DriverSession(cache: cache, options: sessionOptions, write: context.console.writeBody)
        let limit = DriverInFlightLimit(slots: sessionOptions.maxInFlight)
        await session.serve(DriverLineReader.lines(fd: 0, limit: limit), limit: limit)
        session.removeBodyFiles()
        // Background revalidations (stale-while-revalidate) started by the answers finish and are stored before
        // the store closes and the process exits (a refresh cut off by the exit would be lost).
        await cache.close()
        return 0
    }
}
