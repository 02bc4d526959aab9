import Foundation
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Synchronization

/// `dlcache get` without options that need the head first: writes the body (decoded chunk by chunk
/// with `--compressed`) to stdout or `-o FILE` while it arrives (``DownloadCache/stream(_:options:)``), like curl.
///
/// A transfer that fails leaves `-o FILE` holding the bytes received so far and exits non-zero (the cache keeps
/// them as a partial entry for the next run to resume; nothing incomplete is stored as complete). A body over
/// ``progressThresholdBytes`` draws a byte progress bar on stderr when stderr is a terminal and the body does not
/// go to a terminal (``ByteProgressBar``, as curl); never when stderr is a pipe or file.
///
/// With `--retry`, a transient failure (``RetryRule``) is tried again while nothing of it reached stdout: a
/// retried status is decided before its body is written, and `-o FILE` is written again from its first byte.
///
/// A stored body going to `-o FILE` (a regular file, copied in the kernel) is not read through for its crc32
/// first: the check runs on another thread while the kernel copies (``StoredBodyCheck/whileStreaming``), and the
/// run ends only after its verdict. When the body turns out damaged, the file is truncated and the URL fetched
/// again (the entry is gone, so from the origin, checked before serving this time): the file ends with the
/// origin's bytes, or the run fails; a damaged cache never makes a download fail or succeed with wrong bytes.
enum GetStreaming {
    /// Bodies larger than this (in bytes, 4 MiB) get a progress bar when stderr is a terminal.
    static let progressThresholdBytes: Int64 = 4 << 20

    /// What `get` asked for besides the request: where the body goes and how the run reports.
    struct Plan: Sendable {
        /// The output file; nil: stdout.
        var output: URL?
        /// Whether the output file is `-O`'s (opened refusing links).
        var refusingLinks = false
        /// Whether a binary body is refused on a terminal (not with `-o -`).
        var refusingBinary = false
        /// `-v`.
        var verbose = false
        /// `-f/--fail`: a status >= 400 writes no body and fails with exit 22.
        var fail = false
        /// `--compressed`: undo gzip/deflate on output.
        var decoding = false
        /// Whether a progress bar may be drawn (not `-s`, not `--no-progress-meter`).
        var progress = true
        /// `--retry`.
        var retry = RetryRule(count: 0)
        /// Where `-w` finds its values.
        var record: WriteOutRecord?
        /// `--limit-rate`: the most bytes per second written out; nil: unlimited.
        var rate: Int64?
    }

    /// The most bytes one in-kernel copy to `-o FILE` takes on (64 MiB): how often the loop looks up between copies.
    static let directRegionBytes = 64 << 20

    /// What one step of the loop writes: bytes in memory, or a region of the body's file copied in the kernel.
    private enum Piece {
        case data(Data)
        case region(BodyRegion)

        var count: Int {
            switch self {
            case .data(let data): return data.count
            case .region(let region): return region.count
            }
        }
    }

    /// A try that failed in a way `--retry` may try again.
    private struct TryAgain: Error {
        var reason: String
        var retryAfter: String?
    }

    /// The stored body copied to `-o FILE` failed its check and the file was emptied: fetch again.
    private struct FetchAgain: Error {}

    /// Streams the body of `request` as `plan` says; returns the exit code 0.
    /// - Throws: ``CommandFailure`` when the call fails (after the bytes received were written) or the output
    ///   cannot be written.
    static func run(_ request: CacheRequest, options: RequestOptions, plan: Plan, cache: DownloadCache,
                    context: CommandContext) async throws -> Int32 {
        var attempt = 0
        var checksWhileCopying = true
        while true {
            do {
                return try await once(request, options: options, plan: plan, retriesLeft: attempt < plan.retry.count,
                                      checksWhileCopying: checksWhileCopying, cache: cache, context: context)
            } catch let again as TryAgain {
                attempt += 1
                try await plan.retry.wait(attempt: attempt, reason: again.reason, retryAfter: again.retryAfter,
                                          context: context)
            } catch is FetchAgain {
                checksWhileCopying = false  // once: the next answer is checked before it is written
            }
        }
    }

    private static func once(_ request: CacheRequest, options: RequestOptions, plan: Plan, retriesLeft: Bool,
                             checksWhileCopying: Bool, cache: DownloadCache,
                             context: CommandContext) async throws -> Int32 {
        var options = options
        let console = context.console
        let output = plan.output
        let bar = ByteProgressBar(allowed: plan.progress, context: context, bodyToStdout: output == nil)
        bar?.attach(to: &options)
        let sink = try output.map { url throws(CommandFailure) in try BodySink(file: url, refusingLinks: plan.refusingLinks) }
            ?? BodySink(console: console, refusingBinary: plan.refusingBinary)
        defer { sink.close() }
        // A body going unchanged to -o FILE is copied region by region from the file holding it, in the kernel
        // (copy_file_range): no bytes pass through this process. A stored one is checked meanwhile, on another
        // core, when the file can be taken back (truncated) should the check fail.
        let direct = output != nil && !plan.decoding && plan.rate == nil
        if direct, checksWhileCopying, sink.isRewritableFile { options.storedBodyCheck = .whileStreaming }
        let stream = cache.stream(request, options: options)
        var iterator = stream.makeAsyncIterator()
        var written: Int64 = 0
        var writeFailure: CommandFailure?
        // --compressed: the decoder is chosen by the Content-Encoding known once the first chunk is in hand and
        // undoes the coding chunk by chunk (zlib's inflate keeps its state between calls).
        var decoder: ContentDecoder?
        var first = true
        var retriedStatus: Int?
        let pacer = Pacer()
        if plan.rate != nil {
            // Once the call has failed (--max-time, a lost connection), the bytes it received are written out at
            // once: the run ends when the failure happened, not a paced tail later.
            Task { do { _ = try await stream.response() } catch { pacer.callFailed() } }
        }
        do throws(DownloadError) {
            while true {
                let piece: Piece
                if direct {
                    guard let region = try await iterator.nextRegion(maxBytes: directRegionBytes) else { break }
                    piece = .region(region)
                } else {
                    guard let chunk = try await iterator.next() else { break }
                    piece = .data(chunk)
                }
                if first {
                    first = false
                    if retriesLeft, let status = stream.status, RetryRule.transientStatuses.contains(status) {
                        retriedStatus = status
                        break
                    }
                    if plan.fail, let status = stream.status, status >= 400 { break }
                    if plan.decoding { decoder = ContentDecoder(contentEncoding: stream.headers?.first("Content-Encoding")) }
                }
                do throws(CommandFailure) {
                    switch piece {
                    case .region(let region):
                        try sink.write(region)
                    case .data(let chunk):
                        let data = try decoder?.decode(chunk) ?? chunk
                        if let rate = plan.rate {
                            try await pacedWrite(data, to: sink, rate: rate, pacer: pacer)
                        } else {
                            try sink.write(data)
                        }
                    }
                } catch {
                    stream.cancel()
                    writeFailure = error
                    break
                }
                written += Int64(piece.count)
                bar?.wrote(written, of: stream.completedBodySize)
                plan.record?.update { $0.sizeDownload = written }
            }
        } catch {
            bar?.finish()
            // The call keeps its partial entry as it ends: the store must not be closed under it.
            _ = try? await stream.response()
            if error.code == .storedBodyDamaged {
                throw takeBack(written, of: sink, request: request, plan: plan, error: error, console: console)
            }
            let kept = await keptBytes(after: error, url: request.url, cache: cache, options: options)
            if retriesLeft, RetryRule.isTransient(error), written == 0 || output != nil {
                throw TryAgain(reason: ResponseDescription.failureMessage(error, url: request.url, kept: kept,
                                                  consultedCache: options.readFromCache))
            }
            var partial = written == 0 ? ""
                : output != nil ? " (\(written) bytes written to the output)" : " (\(written) bytes written to standard output)"
            if retriesLeft, RetryRule.isTransient(error), written > 0, output == nil {
                partial = " (not tried again: \(written) bytes already went to standard output; -o FILE can be rewritten)"
            }
            let notKept = (kept ?? 0) > 0 ? ""
                : EntryLimitNotice.notKeptClause(headers: stream.headers, limit: cache.store.configuration.partialByteLimit)
            throw CommandFailure(ResponseDescription.failureMessage(error, url: request.url, kept: kept,
                                                  consultedCache: options.readFromCache, pinning: options.pin) + notKept
                + GetCommand.staleCopyHint(error, request: request, options: options, cache: cache) + partial,
                kind: FailureKind(error), url: error.url ?? request.url)
        }
        if let writeFailure {
            bar?.finish()
            _ = try? await stream.response()   // the cancelled call ends (keeping its partial) before the store closes
            throw writeFailure
        }
        if first, retriesLeft, let status = stream.status, RetryRule.transientStatuses.contains(status) {
            retriedStatus = status
        }
        if let retriedStatus { throw await retryStatus(retriedStatus, stream: stream, request: request) }
        if plan.fail, let status = stream.status, status >= 400, written == 0 {
            // -f: nothing of an error answer is written (its chunks come only once its call has ended).
            bar?.finish()
            let response = try? await stream.response()
            if let response {
                plan.record?.update { $0.record(response) }
                removeTemporaryBody(response)
            }
            let text = response.map { $0.statusText.isEmpty ? "" : " " + $0.statusText } ?? ""
            let url = response?.url ?? request.url
            throw CommandFailure("HTTP \(status)\(text) from \(url.absoluteString) (--fail)", kind: .http, url: url)
        }
        if first, plan.decoding {
            decoder = ContentDecoder(contentEncoding: stream.headers?.first("Content-Encoding"))
        }
        try decoder?.finish()
        try sink.finish()
        bar?.finish(bytes: written)
        let response: CachedResponse
        do {
            response = try await stream.response()
        } catch {
            if error.code == .storedBodyDamaged {
                throw takeBack(written, of: sink, request: request, plan: plan, error: error, console: console)
            }
            throw error
        }
        plan.record?.update { $0.record(response) }
        removeTemporaryBody(response)
        if let warning = EntryLimitNotice.warning(response, limit: cache.store.configuration.entryByteLimit) {
            console.err(warning)
        }
        if plan.verbose {
            for hop in response.redirects { console.err(ResponseDescription.redirectLine(hop)) }
            if !response.redirects.isEmpty {
                console.err("final URL: \(TerminalText.escaped(response.url.absoluteString))")
            }
            console.err(ResponseDescription.summaryLine(response))
            console.err("Cache-Status: \(response.cacheStatus.fieldValue)")
        }
        return 0
    }

    /// After a stored body failed its check (`error`) with `written` bytes of it in the output: empties the file
    /// and returns ``FetchAgain``, or — when the output cannot be taken back — the failure saying so.
    private static func takeBack(_ written: Int64, of sink: BodySink, request: CacheRequest, plan: Plan,
                                 error: DownloadError, console: Console) -> any Error {
        let name = plan.output?.path ?? "standard output"
        guard sink.discardWritten() else {
            return CommandFailure("storage error: the stored body of \(request.url.absoluteString) turned out damaged "
                + "after \(written) bytes of it went to '\(name)', which cannot be truncated: they are not the "
                + "response (\(error.detail))", kind: .storage, url: request.url)
        }
        if plan.verbose {
            console.err("dlcache: the stored body turned out damaged after \(written) bytes went to '\(name)': "
                        + "emptied it, fetching \(request.url.absoluteString) again (\(error.detail))")
        }
        return FetchAgain()
    }

    /// The ``TryAgain`` for a transient status, once its call has ended (a non-2xx is delivered only then) and its
    /// temporary body is removed.
    private static func retryStatus(_ status: Int, stream: ResponseStream, request: CacheRequest) async -> TryAgain {
        let response = try? await stream.response()
        if let response { removeTemporaryBody(response) }
        let url = response?.url ?? request.url
        let text = response.map { $0.statusText.isEmpty ? "" : " " + $0.statusText } ?? ""
        return TryAgain(reason: "HTTP \(status)\(text) from \(url.absoluteString)",
                        retryAfter: stream.headers?.first("Retry-After"))
    }

    /// Bytes written under `--limit-rate` since the first one and when that was (real time, not the command's
    /// clock), and whether the call failed (then the rest goes out unpaced).
    final class Pacer: Sendable {
        private struct State {
            var start: ContinuousClock.Instant?
            var written: Int64 = 0
            var failed = false
        }
        private let state = Mutex(State())

        /// The call failed: no more waits.
        func callFailed() { state.withLock { $0.failed = true } }

        /// Seconds to wait after `count` more bytes went out, so the average since the first stays at `rate`.
        func pause(after count: Int, rate: Int64) -> TimeInterval {
            let now = ContinuousClock.now
            return state.withLock { s in
                guard !s.failed else { return 0 }
                let start = s.start ?? now
                s.start = start
                s.written += Int64(count)
                let elapsed = (now - start).components
                let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
                return RateLimit.pause(written: s.written, elapsed: seconds, rate: rate)
            }
        }
    }

    /// Writes `data` in pieces (``RateLimit/piece(rate:)``), waiting after each as long as the average rate
    /// needs. An interrupted wait ends the pacing early: the stream then ends as cancelled.
    static func pacedWrite(_ data: Data, to sink: BodySink, rate: Int64, pacer: Pacer) async throws(CommandFailure) {
        var offset = data.startIndex
        while offset < data.endIndex {
            let end = min(data.endIndex, offset + RateLimit.piece(rate: rate))
            try sink.write(data[offset..<end])
            let pause = pacer.pause(after: end - offset, rate: rate)
            offset = end
            if pause > 0.001 { try? await Task.sleep(for: .milliseconds(Int(pause * 1000))) }
            if Task.isCancelled { return }
        }
    }

    /// The bytes of `url` kept as a partial entry after the call failed with `error` (nil or 0: none). A cancelled
    /// caller returns before its exchange has ended (the exchange ends by itself and keeps what it received), so
    /// after a cancellation the exchanges are awaited first: the message then says what was really kept.
    /// A call that does not write the cache (`--no-store`) keeps nothing: a partial of an earlier run is not its.
    static func keptBytes(after error: DownloadError, url: URL, cache: DownloadCache,
                          options: RequestOptions) async -> Int64? {
        guard options.writeToCache else { return nil }
        if error.code == .cancelled { await cache.waitForBackgroundWork() }
        return cache.partialDescriptions(for: url).map(\.bytesKept).max()
    }

    /// Removes a body file that is not a stored blob: this process's temporary file, once written out.
    static func removeTemporaryBody(_ response: CachedResponse) {
        if case .file(let url) = response.body, response.storedBody == nil, response.storedBodyURL == nil {
            try? FileManager.default.removeItem(at: url)
        }
    }
}
