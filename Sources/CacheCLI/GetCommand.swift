import Foundation
import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// `dlcache get <url>`: fetch one URL through the cache, like curl; body to stdout or `-o FILE`.
package enum GetCommand: Command {
    /// `get`.
    package static let name = "get"
    /// One line for help.
    package static let abstract = "Fetch a URL through the cache and print its body."
    /// Extra help text.
    package static var discussion: String? {
        """
        The body goes to stdout (or -o FILE). With --json one JSON object describing the response goes to
        stdout instead and the body goes to -o FILE or is discarded. Policies: \
        \(PolicyName.table.map(\.name).joined(separator: ", ")).

        --expires-in replaces the server's freshness lifetime (max-age, s-maxage, Expires, heuristics), but a \
        response marked 'no-cache' still has to be revalidated with the origin on every use unless \
        --ignore-cache-control is given too. The lifetime is stored with the entry: later runs without \
        --expires-in keep it, and a 304 revalidation starts it again; --policy reload stores the server's again.

        --session stores a session entry, which the next process that opens the cache drops: for the CLI it \
        means "this process only": the entry is written, then dropped by the next dlcache run. Session storage is \
        meant for programs that keep one cache open (the library's RequestOptions.storage = .session), or to \
        fetch something without leaving it behind.

        curl habits: a binary body (a NUL byte in its first bytes) is not written to a terminal unless '-o -' \
        asks for it (exit 23); -s hides the progress bar, warnings and the error line (-sS keeps the error), \
        -w prints facts after the body; an interrupted download is always resumed by the next get, so '-C -' \
        changes nothing; --retry retries only what is transient and never once bytes went to stdout.

        \(FailureKind.helpTable)
        """
    }
    /// The URL.
    package static var arguments: [ArgumentSpec] { [ArgumentSpec("url", help: "The http:// or https:// URL to fetch.")] }
    /// Options, in help order.
    package static var options: [OptionSpec] {
        CommonOptions.location + [SharedTierOption.spec] + [
            OptionSpec("output", short: "o", .value("file"), help: "Write the body to this file ('-' for stdout, the default)."),
            RemoteName.spec,
            OptionSpec("continue-at", short: "C", .value("offset"),
                       help: "Accepted as '-C -' for curl's command lines: every get resumes an interrupted download by itself (Range + If-Range from the kept partial)."),
            OptionSpec("policy", .value("name"), help: "Cache policy (default: use-protocol, RFC 9111)."),
            OptionSpec("expires-in", .value("seconds"), help: "Keep the response fresh this long (at most 100 years), replacing the server's lifetime (below)."),
            OptionSpec("sliding", help: "Each hit renews the --expires-in lifetime (sliding expiry)."),
            OptionSpec("fallback-to-cache", help: "Serve the stored response if the origin cannot be reached or answers 5xx."),
            OptionSpec("no-stale-when-disconnected",
                       help: "Report an unreachable origin instead of serving a stale copy (RFC 9111 4.2.4, on by default)."),
            TargetedFieldOption.privateSpec,
            OptionSpec("ignore-cache-control", help: "Ignore the server's Cache-Control, Pragma and Expires."),
            OptionSpec("session", help: "Store as a session entry: for the CLI, this process only (below)."),
            OptionSpec("no-store", help: "Do not write the response to the cache."),
            OptionSpec("no-read", help: "Do not read from the cache (always ask the origin)."),
            OptionSpec("pin", help: "Pin the stored entry (never evicted by limits)."),
            OptionSpec("header", short: "H", .repeated("name: value"), help: "Add a request header (repeatable)."),
            OptionSpec("range", short: "r", .value("range"),
                       help: "Ask for bytes only, like curl's -r: '0-499', '500-', '-500' (sends Range: bytes=<range>); one range is cut from a stored response (206, or 416), several go to the origin uncached."),
            OptionSpec("request", short: "X", .value("method"), help: "Request method (default: GET)."),
            OptionSpec("location", short: "L", help: "Follow redirects (the default; accepted for curl's command lines)."),
            OptionSpec("no-follow", help: "Return a 3xx response itself instead of following its Location."),
            OptionSpec("max-redirs", .value("n"), help: "Follow at most this many redirects (default 10; exit 47 beyond)."),
            OptionSpec("compressed", help: "Ask for gzip/deflate and decode it on output; the cache keeps it as received."),
            OptionSpec("head", short: "I", help: "Send HEAD and print the response's header block (a fresh stored GET answers it)."),
            OptionSpec("include", short: "i", help: "Print the response's header block before the body."),
            OptionSpec("dump-header", short: "D", .value("file"), help: "Write the response's header block to this file ('-' for stdout)."),
        ] + FetchLimits.options + StorageLimitOptions.options + TLSOptions.options + [
            OptionSpec("fail", short: "f", help: "Exit 22 on HTTP status >= 400 and print no body (like curl)."),
        ] + RetryRule.options + [RateLimit.spec, WriteOut.spec] + MessageOptions.options + [
            OptionSpec("verbose", short: "v", help: "Print a summary line, the decision's reason and any storage warnings on stderr."),
            CommonOptions.json,
        ]
    }

    /// Builds the request options from the command line.
    /// - Throws: ``UsageError`` naming a bad value.
    static func requestOptions(_ parsed: ParsedArguments) throws(UsageError) -> RequestOptions {
        var options = RequestOptions()
        if let name = parsed.value("policy") { options.policy = try PolicyName.policy(named: name) }
        let expiresIn = try parsed.seconds("expires-in", maximum: SecondsLimit.expiresIn, maximumLabel: "100 years")
        switch (expiresIn, parsed.flag("sliding")) {
        case (let seconds?, true): options.expiration = .sliding(seconds)
        case (let seconds?, false): options.expiration = .seconds(seconds)
        case (nil, true): throw UsageError("'--sliding' needs '--expires-in <seconds>'")
        case (nil, false): options.expiration = .server
        }
        options.fallbackToCacheIfLoadFails = parsed.flag("fallback-to-cache")
        options.ignoreServerCacheControl = parsed.flag("ignore-cache-control")
        options.storage = parsed.flag("session") ? .session : .permanent
        options.writeToCache = !parsed.flag("no-store")
        options.readFromCache = !parsed.flag("no-read")
        options.pin = parsed.flag("pin")
        try FetchLimits.parse(parsed).apply(to: &options)
        options.maxReceiveBytesPerSecond = try RateLimit.parse(parsed)
        options.followRedirects = !parsed.flag("no-follow")
        if let text = parsed.value("max-redirs") {
            guard let count = Int(text), (0...1_000).contains(count) else {
                throw UsageError("invalid value '\(text)' for '--max-redirs': expected a whole number from 0 to 1000")
            }
            options.maxRedirects = count
        }
        return options
    }

    /// Builds the request from the URL, `-X` and `-H`.
    /// - Throws: ``UsageError`` naming a bad URL, method or header.
    static func request(_ parsed: ParsedArguments) throws(UsageError) -> CacheRequest {
        let url = try CacheOpener.url(parsed.positionals[0])
        let method = (parsed.value("request") ?? (parsed.flag("head") ? "HEAD" : "GET")).uppercased()
        if parsed.flag("head"), method != "HEAD" {
            throw UsageError("'-I/--head' sends HEAD; it cannot be combined with '-X \(method)'")
        }
        let token = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~")
        guard !method.isEmpty, method.allSatisfy({ token.contains($0) }) else {
            throw UsageError("invalid value '\(parsed.value("request") ?? "")' for '-X': not an HTTP method token")
        }
        var headers = try CacheOpener.headers(parsed.all("header"))
        if let range = parsed.value("range") {
            guard !headers.contains("Range") else {
                throw UsageError("'-r/--range' and '-H \"Range: ...\"' both set the Range header; give one")
            }
            guard !range.isEmpty, RFC9110.rangeRequest(HTTPHeaders([("Range", "bytes=" + range)])) != nil else {
                throw UsageError("invalid value '\(range)' for '--range': expected 'first-last', 'first-', '-suffix' or a comma-separated list of them")
            }
            headers.add("Range", "bytes=" + range)
        }
        // Framing fields (Content-Length, Transfer-Encoding, Connection, Expect ...), a Host naming another
        // authority and control characters belong to the transport: refused here as a usage error.
        if parsed.flag("compressed"), !headers.contains("Accept-Encoding") {
            headers.add("Accept-Encoding", ContentDecoder.acceptEncoding)
        }
        if let problem = MessageFraming.requestProblem(method: method, url: url, headers: headers) {
            throw UsageError("invalid value for '-H': \(problem)")
        }
        return CacheRequest(method: method, url: url, headers: headers)
    }

    /// Fetches the URL and prints the body, the `-v` line or the JSON object.
    /// - Throws: ``UsageError`` for bad options, ``CommandFailure`` when nothing usable could be fetched.
    package static func run(_ parsed: ParsedArguments, context: CommandContext) async throws -> Int32 {
        let messages = MessageOptions(parsed)
        let quiet = messages.applied(to: context)
        let start = context.environment.now()
        let record = WriteOutRecord(url: parsed.positionals[0])
        let failure: CommandFailure
        do {
            let code = try await fetch(parsed, context: quiet, messages: messages, record: record)
            writeOut(parsed, record, start: start, exitCode: code, context: quiet)
            return code
        } catch let error as CommandFailure {
            failure = error
        } catch let error as UsageError {
            throw error
        } catch {
            failure = CommandFailure(ErrorText.describe(error))
        }
        writeOut(parsed, record, start: start, exitCode: failure.kind.exitCode, error: failure.message, context: quiet)
        var quietFailure = failure
        quietFailure.quiet = !messages.errors
        throw quietFailure
    }

    /// Prints `-w FORMAT` (when given) on stdout, and a warning per unknown variable on stderr.
    static func writeOut(_ parsed: ParsedArguments, _ record: WriteOutRecord, start: Date, exitCode: Int32,
                         error: String = "", context: CommandContext) {
        guard let format = parsed.value("write-out") else { return }
        record.update { values in
            values.timeTotal = context.environment.now().timeIntervalSince(start)
            values.exitCode = exitCode
            values.errorMessage = ErrorText.oneLine(error)
        }
        let (text, unknown) = WriteOut.render(format, record.current)
        for name in unknown { context.console.err("Warning: unknown --write-out variable '\(TerminalText.escaped(name))'") }
        _ = context.console.writeBody(Data(text.utf8))
    }

    /// The output file `-o FILE` or `-O` names (nil: stdout), and whether it is `-O`'s (opened refusing links).
    /// - Throws: ``UsageError`` for `-o ''`, both options, or a URL `-O` cannot name a file after.
    static func output(_ parsed: ParsedArguments, url: URL, context: CommandContext) throws(UsageError) -> (URL?, remote: Bool) {
        let outputOption = parsed.value("output")
        if outputOption == "" {
            throw UsageError("invalid value '' for '--output': expected a file name, or '-' for stdout")
        }
        if parsed.flag("remote-name") {
            guard outputOption == nil else { throw UsageError("'-o/--output' and '-O/--remote-name' both name the output; give one") }
            return (context.environment.currentDirectory.appendingPathComponent(try RemoteName.fileName(for: url)), true)
        }
        return (outputOption.flatMap { $0 == "-" ? nil : context.environment.fileURL(for: $0) }, false)
    }

    /// Fetches the URL and prints the body, the `-v` line or the JSON object, with stderr as `messages` allow.
    static func fetch(_ parsed: ParsedArguments, context: CommandContext, messages: MessageOptions,
                      record: WriteOutRecord) async throws -> Int32 {
        let request = try request(parsed)
        let retry = try RetryRule(parsed)
        let rate = try RateLimit.parse(parsed)
        if let resume = parsed.value("continue-at"), resume != "-" {
            throw UsageError("invalid value '\(resume)' for '-C/--continue-at': only '-C -' is accepted; every get resumes "
                             + "an interrupted download from the bytes the cache kept")
        }
        var options = try requestOptions(parsed)
        let trust = try TLSOptions.trust(parsed, context: context)
        // Said under -v, and on a terminal unless -s: a get that waits silently looks hung.
        if parsed.flag("verbose") || (context.console.stderrIsTerminal && messages.messages) {
            let console = context.console
            options.waitingForAnotherProcess = { url in
                console.err("waiting for another dlcache process downloading \(TerminalText.escaped(url.absoluteString)) "
                            + "(its response answers this one too)")
            }
        }
        // An unverified response is never stored: a later verified run must not be answered with it.
        if !trust.verifiesPeer { options.writeToCache = false }
        let (output, remoteName) = try output(parsed, url: request.url, context: context)
        if parsed.value("dump-header") == "" {
            throw UsageError("invalid value '' for '--dump-header': expected a file name, or '-' for stdout")
        }
        let bodyToStdout = parsed.value("output") == "-"
        let noStale = parsed.flag("no-stale-when-disconnected")
        let targets = try TargetedFieldOption.targets(parsed)
        let cache = try CacheOpener.open(parsed, context: context, create: true, sharedTier: true, trims: true) { configuration in
            configuration.servesStaleWhenDisconnected = !noStale
            configuration.targetedFields = targets
            configuration.tlsTrust = trust
        }
        let headOnly = parsed.flag("head")
        let include = (headOnly || parsed.flag("include")) && !parsed.flag("json")
        // The plain case and --fail stream: the body goes out as it arrives (a 2xx is followed live; any other
        // status is known before its first byte). Options that print header fields or the whole answer before
        // the body (--json, -i, -I, -D) wait for the whole response.
        let streams = !parsed.flag("json") && !include && parsed.value("dump-header") == nil
        if streams {
            let plan = GetStreaming.Plan(output: output, refusingLinks: remoteName, refusingBinary: !bodyToStdout,
                                         verbose: parsed.flag("verbose"), fail: parsed.flag("fail"),
                                         decoding: parsed.flag("compressed"), progress: messages.progress,
                                         retry: retry, record: record, rate: rate)
            return try await GetStreaming.run(request, options: options, plan: plan, cache: cache, context: context)
        }
        // The byte bar follows the transfer here too (curl draws its meter with -i, -D and -f as well).
        let bar = ByteProgressBar(allowed: messages.progress, context: context, bodyToStdout: output == nil)
        bar?.attach(to: &options)
        let response: CachedResponse
        do {
            response = try await bufferedResponse(request, options: options, retry: retry, cache: cache, context: context)
        } catch {
            bar?.finish()
            throw error
        }
        bar?.finish(bytes: response.bodySize)
        record.update { $0.record(response) }
        // A body file that is not a stored blob (--no-store, not storable, over --max-entry, a range slice) is
        // this process's temporary file: removed once written out, so nothing lingers in the store's tmp/.
        defer {
            if case .file(let url) = response.body, response.storedBody == nil, response.storedBodyURL == nil {
                try? FileManager.default.removeItem(at: url)
            }
        }
        let failed = parsed.flag("fail") && response.status >= 400
        if let warning = EntryLimitNotice.warning(response, limit: cache.store.configuration.entryByteLimit) {
            context.console.err(warning)
        }
        if parsed.flag("verbose") {
            for hop in response.redirects { context.console.err(ResponseDescription.redirectLine(hop)) }
            if !response.redirects.isEmpty {
                context.console.err("final URL: \(TerminalText.escaped(response.url.absoluteString))")
            }
            context.console.err(ResponseDescription.summaryLine(response))
            context.console.err("Cache-Status: \(response.cacheStatus.fieldValue)")
        }
        if parsed.flag("json") && !failed {
            var object = ResponseDescription.json(response)
            // Bodies small enough to be returned in memory come without their file; look it up.
            if response.storedBodyURL == nil, options.writeToCache || response.isFromCache,
               let file = cache.storedBodyFileURL(for: request) {
                object["path"] = file.path
            }
            context.console.out(try JSONOutput.line(object))
        }
        if let dump = parsed.value("dump-header"), !failed {
            if dump == "-" {
                context.console.out(HeaderBlock.text(response, forTerminal: context.console.stdoutIsTerminal), terminator: "")
            } else {
                let sink = try BodySink(file: context.environment.fileURL(for: dump))
                defer { sink.close() }
                try sink.write(Data(HeaderBlock.text(response, forTerminal: false).utf8))
            }
        }
        if !failed {
            if let output {
                let sink = try BodySink(file: output, refusingLinks: remoteName)
                defer { sink.close() }
                if include { try sink.write(Data(HeaderBlock.text(response, forTerminal: false).utf8), isBody: false) }
                if !headOnly {
                    try write(response, to: sink, decoding: parsed.flag("compressed"))
                    record.update { $0.sizeDownload = response.bodySize }
                }
            } else if bodyToStdout || !parsed.flag("json") {
                let sink = BodySink(console: context.console, refusingBinary: !bodyToStdout)
                if include {
                    try sink.write(Data(HeaderBlock.text(response, forTerminal: context.console.stdoutIsTerminal).utf8),
                                   isBody: false)
                }
                if !headOnly {
                    try write(response, to: sink, decoding: parsed.flag("compressed"))
                    record.update { $0.sizeDownload = response.bodySize }
                }
            }
        }
        if failed {
            throw CommandFailure("HTTP \(response.status) \(response.statusText) from \(response.url.absoluteString) (--fail)",
                                 kind: .http, url: response.url)
        }
        return 0
    }

    /// The whole response to `request` (for the options that need the head before the body), tried again as
    /// `retry` allows after a transient failure or status.
    /// - Throws: ``CommandFailure`` when the last try fails.
    static func bufferedResponse(_ request: CacheRequest, options: RequestOptions, retry: RetryRule,
                                 cache: DownloadCache, context: CommandContext) async throws(CommandFailure) -> CachedResponse {
        var attempt = 0
        while true {
            let retriesLeft = attempt < retry.count
            attempt += 1
            let response: CachedResponse
            do {
                response = try await cache.response(for: request, options: options)
            } catch {
                let kept = await GetStreaming.keptBytes(after: error, url: request.url, cache: cache, options: options)
                let message = ResponseDescription.failureMessage(error, url: request.url, kept: kept,
                                                                 consultedCache: options.readFromCache, pinning: options.pin)
                if retriesLeft, RetryRule.isTransient(error) {
                    try await retry.wait(attempt: attempt, reason: message, retryAfter: nil, context: context)
                    continue
                }
                throw CommandFailure(message + staleCopyHint(error, request: request, options: options, cache: cache),
                                     kind: FailureKind(error), url: error.url ?? request.url)
            }
            guard retriesLeft, RetryRule.transientStatuses.contains(response.status) else { return response }
            GetStreaming.removeTemporaryBody(response)
            let text = response.statusText.isEmpty ? "" : " " + response.statusText
            try await retry.wait(attempt: attempt, reason: "HTTP \(response.status)\(text) from \(response.url.absoluteString)",
                                 retryAfter: response.headers.first("Retry-After"), context: context)
        }
    }

    /// ` (a stale copy is stored: --fallback-to-cache serves it)` when the origin could not be reached, the
    /// call did not ask for the fallback, and the store holds an entry for the URL that the fallback would
    /// serve (RFC 9111 §4.2.4: not one whose must-revalidate or no-cache forbids serving it stale); else "".
    static func staleCopyHint(_ error: DownloadError, request: CacheRequest, options: RequestOptions,
                              cache: DownloadCache) -> String {
        switch error.code {
        case .connectionFailed, .timedOut: break
        default:
            guard error.transportError?.code == .tlsFailed else { return "" }
        }
        // A redirect target failed: the stored copies of the requested URL do not stand in for it.
        if let failed = error.url, failed != request.url { return "" }
        guard !options.fallbackToCacheIfLoadFails, options.readFromCache, options.policy != .reload, request.method.uppercased() == "GET"
        else { return "" }
        let configuration = cache.configuration
        let fallback = EvaluationOptions(mode: configuration.mode, policy: options.policy,
                                         ignoreServerCacheControl: options.ignoreServerCacheControl,
                                         lifetimeOverride: options.expiration.lifetime,
                                         fallbackToCacheIfLoadFails: true,
                                         targetedFields: configuration.effectiveTargetedFields)
        let now = configuration.now()
        let servable = cache.entryDescriptions(for: request.url).contains { entry in
            guard entry.method == "GET" else { return false }
            if case .useStored = RFC9111.errorDecision(stored: entry.stored, request: request, now: now,
                                                       options: fallback, status: nil) { return true }
            return false
        }
        return servable ? " (a stale copy is stored: --fallback-to-cache serves it)" : ""
    }

    /// Streams the body (in memory or a file) to `sink`; with `decoding`, a gzip or deflate `Content-Encoding`
    /// is undone on the way (``ContentDecoder``), any other coding is written as received.
    static func write(_ response: CachedResponse, to sink: BodySink, decoding: Bool = false) throws(CommandFailure) {
        guard decoding, let decoder = ContentDecoder(contentEncoding: response.headers.first("Content-Encoding")) else {
            switch response.body {
            case .data(let data):
                try sink.write(data)
                try sink.finish()
            case .file(let url):
                if let stored = response.storedBody { try sink.copy(from: stored) } else { try sink.copy(from: url) }
            }
            return
        }
        switch response.body {
        case .data(let data):
            try sink.write(try decoder.decode(data))
            try sink.finish()
        case .file(let url):
            let transform = { (chunk: Data) throws(CommandFailure) in try decoder.decode(chunk) }
            if let stored = response.storedBody {
                try sink.copy(from: stored, transform: transform)
            } else {
                try sink.copy(from: url, transform: transform)
            }
        }
        try decoder.finish()
    }
}
