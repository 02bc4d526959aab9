import Foundation
import DownloadCache

/// `dlcache prefetch [FILE|-]`: download many URLs into the cache (pre-caching), with progress and a summary.
public enum PrefetchCommand: Command {
    /// `prefetch`.
    public static let name = "prefetch"
    /// One line for help.
    public static let abstract = "Download a list of URLs into the cache (one per line)."
    /// Extra help text.
    public static var discussion: String? {
        """
        Reads URLs one per line from FILE, or from stdin when FILE is '-' or missing; blank lines and lines \
        starting with '#' are skipped. Draws a live progress bar on a terminal (count, bytes, rate, ETA), plain \
        lines otherwise, and a summary at the end. Exits 1 if any URL failed.
        """
    }
    /// The list file.
    public static var arguments: [ArgumentSpec] {
        [ArgumentSpec("file", help: "File with one URL per line, or '-' for stdin (default).", optional: true)]
    }
    /// Options, in help order.
    public static var options: [OptionSpec] {
        CommonOptions.location + [
            OptionSpec("concurrency", .value("n"), help: "Downloads at the same time (default: 6)."),
            OptionSpec("pin", help: "Pin every entry so limits never evict it."),
            CommonOptions.json,
        ]
    }

    /// Reads and validates the URL list.
    /// - Throws: ``UsageError`` naming the bad line, ``CommandFailure`` when the file cannot be read.
    static func readURLs(_ parsed: ParsedArguments, context: CommandContext) throws -> [URL] {
        let source = parsed.positionals.first ?? "-"
        let data: Data
        if source == "-" {
            data = context.console.readStdin()
        } else {
            let url = context.environment.fileURL(for: source)
            do { data = try Data(contentsOf: url) } catch {
                throw CommandFailure("cannot read URL list '\(source)': \(error.localizedDescription)")
            }
        }
        var urls: [URL] = []
        for (number, raw) in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            urls.append(try CacheOpener.url(line, what: "URL on line \(number + 1)"))
        }
        return urls
    }

    /// Downloads the URLs and prints the summary (text or JSON).
    /// - Throws: ``UsageError`` for bad options or URLs, ``CommandFailure`` when the list or the cache cannot open.
    public static func run(_ parsed: ParsedArguments, context: CommandContext) async throws -> Int32 {
        let concurrency = try parsed.integer("concurrency", in: 1...1000)
        let urls = try readURLs(parsed, context: context)
        let cache = try CacheOpener.open(parsed, context: context)
        let environment = context.environment
        let start = environment.now()
        let reporter = ProgressReporter(console: context.console, start: start, now: environment.now)
        let report = await cache.prefetch(urls, pin: parsed.flag("pin"), concurrency: concurrency) { progress in
            reporter.update(.init(completed: progress.completed, failed: progress.failed,
                                  total: progress.total, bytes: progress.bytes))
        }
        reporter.finish()
        let seconds = environment.now().timeIntervalSince(start)
        let failures = report.failed.map { (url: $0.url.absoluteString, error: "\($0.error)") }
        if parsed.flag("json") {
            let object: [String: Any] = [
                "total": urls.count,
                "succeeded": report.succeeded.count,
                "failed": failures.count,
                "bytes": report.bytes,
                "fromCache": report.fromCache,
                "fromNetwork": report.fromNetwork,
                "seconds": (seconds * 1000).rounded() / 1000,
                "pinned": parsed.flag("pin"),
                "failures": failures.map { ["url": $0.url, "error": $0.error] },
            ]
            context.console.out(try JSONOutput.line(object))
        } else {
            for failure in failures {
                context.console.err("failed: \(failure.url): \(failure.error)")
            }
            context.console.out("prefetched \(report.succeeded.count)/\(urls.count) URLs, "
                + "\(Formatting.bytes(report.bytes)) in \(String(format: "%.2f", seconds))s "
                + "(\(report.fromNetwork) from network, \(report.fromCache) from cache), \(failures.count) failed"
                + (parsed.flag("pin") ? ", pinned" : ""))
        }
        return failures.isEmpty ? 0 : 1
    }
}
