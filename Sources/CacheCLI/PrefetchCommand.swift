import Foundation
import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// `dlcache prefetch [FILE|-]`: download many URLs into the cache (pre-caching), with progress and a summary.
package enum PrefetchCommand: Command {
    /// `prefetch`.
    package static let name = "prefetch"
    /// One line for help.
    package static let abstract = "Download a list of URLs into the cache (one per line)."
    /// Extra help text.
    package static var discussion: String? {
        """
        Reads URLs one per line from FILE, or from stdin when FILE is '-' or missing; blank lines and lines \
        starting with '#' (comments) are skipped, and so is a trailing comment: '#' after white space \
        ('http://host/a.html  # the index'); LF and CRLF line ends both work and a leading UTF-8 \
        byte-order mark is ignored. A line that is not an http(s) URL, or whose URL has white space inside \
        (write it as %20), is reported on stderr with its line number and reason and skipped; the others are \
        still fetched. Draws a live progress bar on a terminal \
        (count, bytes received so far, rate, ETA), plain lines otherwise, and a summary at the end. A URL \
        whose body a limit keeps out of the cache (over --max-entry, or no room beside the pinned entries within \
        --max-disk) is listed as failed: it is not cached afterwards. Exits 1 if any URL failed or any line was \
        invalid.
        """
    }
    /// The list file.
    package static var arguments: [ArgumentSpec] {
        [ArgumentSpec("file", help: "File with one URL per line, or '-' for stdin (default).", optional: true)]
    }
    /// Options, in help order.
    package static var options: [OptionSpec] {
        CommonOptions.location + [SharedTierOption.spec] + [
            OptionSpec("concurrency", .value("n"), help: "Downloads at the same time (default: 6)."),
            OptionSpec("pin", help: "Pin every entry fetched with a 2xx so limits never evict it (a failed URL's stored answer is not pinned)."),
        ] + FetchLimits.options + StorageLimitOptions.options + TLSOptions.trustRootOptions + [
            OptionSpec("verbose", short: "v", help: "Also print storage warnings (responses that could not be stored) on stderr."),
            CommonOptions.json,
        ]
    }

    /// A parsed URL list: the valid URLs in order, and each invalid line's 1-based number and reason.
    struct URLList: Sendable {
        /// The valid URLs, in list order.
        var urls: [URL]
        /// The invalid lines: 1-based line number and the reason in words.
        var invalid: [(line: Int, reason: String)]
    }

    /// Reads and validates the URL list.
    /// - Throws: ``CommandFailure`` when the file cannot be read (missing, a directory, no permission).
    static func readURLs(_ parsed: ParsedArguments, context: CommandContext) throws -> URLList {
        let source = parsed.positionals.first ?? "-"
        let data: Data
        if source == "-" {
            data = context.console.readStdin()
        } else {
            let url = context.environment.fileURL(for: source)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
                throw CommandFailure("cannot read URL list '\(source)': is a directory")
            }
            do { data = try Data(contentsOf: url) } catch {
                throw CommandFailure("cannot read URL list '\(source)': \(ErrorText.describe(error))")
            }
        }
        return parseURLList(data)
    }

    /// Parses a URL list: one URL per line, lines ending in LF or CRLF (or a lone CR) and nothing else; a leading
    /// UTF-8 byte-order mark is ignored; surrounding whitespace is trimmed; blank lines and lines starting with `#`
    /// are skipped, and `#` after white space starts a trailing comment (`http://h/a  # note` is `http://h/a`).
    ///
    /// The bytes are split before any decoding, so no other "line separator" (NEL U+0085, U+2028, U+2029, VT, FF,
    /// which Swift's `Character.isNewline` also matches) can turn one line into two URLs. A line that is not UTF-8,
    /// or holds a control character (C0 other than tab, DEL, C1, U+2028, U+2029), is an invalid line
    /// (`invalid line: not UTF-8 text`, `invalid line: control character U+0085`) and is not fetched; so is a line
    /// that is not an http(s) URL, or whose URL has white space inside (Foundation would quietly encode it as
    /// `%20`). ``URLList/invalid`` keeps each with its 1-based number and reason.
    static func parseURLList(_ data: Data) -> URLList {
        var list = URLList(urls: [], invalid: [])
        for (index, bytes) in lines(of: data).enumerated() {
            var content = bytes[...]
            if index == 0, content.starts(with: [0xEF, 0xBB, 0xBF]) { content = content.dropFirst(3) }
            switch lineText(content) {
            case .success(let text):
                parseLine(text, number: index + 1, into: &list)
            case .failure(let reason):
                list.invalid.append((index + 1, reason.reason))
            }
        }
        return list
    }

    /// ``parseURLList(_:)-(Data)`` of `text`'s UTF-8 bytes.
    static func parseURLList(_ text: String) -> URLList {
        parseURLList(Data(text.utf8))
    }

    /// The lines of `data`, split at LF, CRLF and a lone CR only, without their terminators; a last line without a
    /// terminator counts, nothing after the last terminator is no line.
    static func lines(of data: Data) -> [[UInt8]] {
        var result: [[UInt8]] = []
        var current: [UInt8] = []
        var afterCR = false
        var pending = false
        for byte in data {
            if afterCR {
                afterCR = false
                if byte == 0x0A { continue }
            }
            switch byte {
            case 0x0A:
                result.append(current)
                current.removeAll(keepingCapacity: true)
                pending = false
            case 0x0D:
                result.append(current)
                current.removeAll(keepingCapacity: true)
                afterCR = true
                pending = false
            default:
                current.append(byte)
                pending = true
            }
        }
        if pending { result.append(current) }
        return result
    }

    /// One line's bytes as text, or why it is not a line of a URL list: not UTF-8, or a control character other
    /// than tab (C0, DEL, C1) or U+2028 / U+2029.
    static func lineText(_ bytes: ArraySlice<UInt8>) -> Result<String, LineRefusal> {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(LineRefusal(reason: "invalid line: not UTF-8 text"))
        }
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if (value < 0x20 && value != 0x09) || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029 {
                let hex = String(value, radix: 16, uppercase: true)
                return .failure(LineRefusal(reason: "invalid line: control character U+\(String(repeating: "0", count: max(0, 4 - hex.count)))\(hex)"))
            }
        }
        return .success(text)
    }

    /// Why a line of a URL list was refused before it was read as a URL.
    struct LineRefusal: Error, Sendable {
        var reason: String
    }

    /// Reads one decoded line (1-based `number`): skipped when blank or a comment, else a URL or an invalid line.
    private static func parseLine(_ raw: String, number: Int, into list: inout URLList) {
        // The usual line, printable ASCII without white space, has nothing to trim and no trailing comment: no
        // Unicode property lookups for it (they cost about 2 % of the CPU of a 2,000-URL prefetch).
        if !raw.isEmpty, raw.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            if raw.utf8.first == UInt8(ascii: "#") { return }
            do {
                list.urls.append(try CacheOpener.url(raw))
            } catch {
                list.invalid.append((number, error.message))
            }
            return
        }
        var line = raw.trimmingCharacters(in: .whitespaces)
        if line.isEmpty || line.hasPrefix("#") { return }
        if let comment = trailingComment(in: line) {
            line = String(line[..<comment]).trimmingCharacters(in: .whitespaces)
        }
        // White space inside what starts as a URL: say so (a line that is no URL at all gets the URL error).
        if line.contains(where: \.isWhitespace),
           (try? CacheOpener.url(String(line.prefix(while: { !$0.isWhitespace })))) != nil {
            list.invalid.append((number, "invalid URL '\(line)': white space inside a URL (write it as %20; "
                                 + "a comment after the URL starts with white space and '#')"))
            return
        }
        do {
            list.urls.append(try CacheOpener.url(line))
        } catch {
            list.invalid.append((number, error.message))
        }
    }

    /// Where a trailing comment starts in `line`: the first white space followed (after more white space) by `#`;
    /// nil when there is none. A `#` right after a character that is not white space is part of the URL (its
    /// fragment).
    static func trailingComment(in line: String) -> String.Index? {
        var index = line.startIndex
        while let space = line[index...].firstIndex(where: \.isWhitespace) {
            let rest = line[space...].drop(while: \.isWhitespace)
            if rest.first == "#" { return space }
            guard let next = rest.indices.first else { return nil }
            index = next
        }
        return nil
    }

    /// Downloads the URLs and prints the summary (text or JSON).
    /// - Throws: ``UsageError`` for bad options or URLs, ``CommandFailure`` when the list or the cache cannot open.
    package static func run(_ parsed: ParsedArguments, context: CommandContext) async throws -> Int32 {
        let concurrency = try parsed.integer("concurrency", in: 1...1000)
        let limits = try FetchLimits.parse(parsed)
        let list = try readURLs(parsed, context: context)
        let urls = list.urls
        for bad in list.invalid {
            context.console.err("skipped line \(bad.line): \(TerminalText.escaped(bad.reason))")
        }
        let trust = try TLSOptions.trust(parsed, context: context)
        let cache = try CacheOpener.open(parsed, context: context, create: true, sharedTier: true, trims: true) { configuration in
            configuration.tlsTrust = trust
        }
        let environment = context.environment
        let start = environment.now()
        let reporter = ProgressReporter(console: context.console, start: start, now: environment.now)
        let report = await PrefetchRunner.run(cache, urls: urls, pin: parsed.flag("pin"),
                                              concurrency: concurrency, limits: limits, reporter: reporter)
        reporter.finish()
        let seconds = environment.now().timeIntervalSince(start)
        // The library names its setting; the command line names the option that set it, with its size.
        let entryLimit = cache.store.configuration.entryByteLimit.map { "entry limit of \(EntryLimitNotice.limitText($0))" }
        let failures = report.failed.map { failure in
            let text = ErrorText.describe(failure.error)
            return (url: failure.url.absoluteString,
                    error: entryLimit.map { text.replacingOccurrences(of: DownloadCache.entryLimitWords, with: $0) } ?? text)
        }
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
                "invalidLines": list.invalid.map { ["line": $0.line, "reason": $0.reason] as [String: Any] },
            ]
            context.console.out(try JSONOutput.line(object))
        } else {
            for failure in failures {
                context.console.err("failed: \(failure.url): \(failure.error)")
            }
            context.console.out("prefetched \(report.succeeded.count)/\(urls.count) URLs, "
                + "\(Formatting.bytes(report.bytes)) in \(String(format: "%.2f", seconds))s "
                + "(\(report.fromNetwork) from network, \(report.fromCache) from cache), \(failures.count) failed"
                + (parsed.flag("pin") ? ", pinned" : "")
                + (list.invalid.isEmpty ? "" : ", \(list.invalid.count) invalid \(list.invalid.count == 1 ? "line" : "lines") skipped"))
        }
        return failures.isEmpty && list.invalid.isEmpty ? 0 : 1
    }
}
