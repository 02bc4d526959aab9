import Foundation
import DownloadCache
import CacheStore
import HTTPCacheSemantics
import Synchronization

/// `dlcache get` without options that need the head first: writes the body (decoded chunk by chunk
/// with `--compressed`) to stdout or `-o FILE` while it arrives (``DownloadCache/stream(_:options:)``), like curl.
///
/// A transfer that fails leaves `-o FILE` holding the bytes received so far and exits non-zero (the cache keeps
/// them as a partial entry for the next run to resume; nothing incomplete is stored as complete). On a terminal,
/// a body over ``progressThresholdBytes`` draws a byte progress bar on stderr; never when stderr is a pipe or file.
enum GetStreaming {
    /// Bodies larger than this (in bytes, 4 MiB) get a progress bar on a terminal.
    static let progressThresholdBytes: Int64 = 4 << 20

    /// Streams the body of `request` to `output` (nil: stdout); returns the exit code 0.
    /// - Throws: ``CommandFailure`` when the call fails (after the bytes received were written) or the output
    ///   cannot be written.
    static func run(_ request: CacheRequest, options: RequestOptions, output: URL?, refusingLinks: Bool = false,
                    cache: DownloadCache, verbose: Bool, decoding: Bool, progress: Bool = true,
                    context: CommandContext) async throws -> Int32 {
        var options = options
        let console = context.console
        let reporter: ProgressReporter? = progress && console.stderrIsTerminal
            ? ProgressReporter(console: console, start: context.environment.now(), now: context.environment.now) : nil
        let drawing = Mutex(false)
        if let reporter {
            let earlier = options.progress
            options.progress = { progress in
                earlier?(progress)
                let large = max(progress.bytesReceived, progress.bytesExpected ?? 0) > progressThresholdBytes
                guard large else { return }
                drawing.withLock { $0 = true }
                reporter.update(.init(completed: 0, failed: 0, total: 1, bytes: progress.bytesReceived,
                                      expectedBytes: progress.bytesExpected))
            }
        }
        let stream = cache.stream(request, options: options)
        let sink = try output.map { url throws(CommandFailure) in try BodySink(file: url, refusingLinks: refusingLinks) } ?? BodySink(console: console)
        defer { sink.close() }
        var iterator = stream.makeAsyncIterator()
        var written: Int64 = 0
        var writeFailure: CommandFailure?
        // --compressed: the decoder is chosen by the Content-Encoding known once the first chunk is in hand and
        // undoes the coding chunk by chunk (zlib's inflate keeps its state between calls).
        var decoder: ContentDecoder?
        var decoderChosen = !decoding
        do throws(DownloadError) {
            while let chunk = try await iterator.next() {
                if !decoderChosen {
                    decoder = ContentDecoder(contentEncoding: stream.headers?.first("Content-Encoding"))
                    decoderChosen = true
                }
                do throws(CommandFailure) { try sink.write(try decoder?.decode(chunk) ?? chunk) } catch {
                    stream.cancel()
                    writeFailure = error
                    break
                }
                written += Int64(chunk.count)
            }
        } catch {
            if drawing.withLock({ $0 }) { reporter?.finish() }
            // The call keeps its partial entry as it ends: the store must not be closed under it.
            _ = try? await stream.response()
            let partial = output != nil && written > 0 ? " (\(written) bytes written to the output)" : ""
            throw CommandFailure(ResponseDescription.failureMessage(error, url: request.url)
                + GetCommand.staleCopyHint(error, request: request, options: options, cache: cache) + partial,
                kind: FailureKind(error), url: error.url ?? request.url)
        }
        if let writeFailure {
            if drawing.withLock({ $0 }) { reporter?.finish() }
            _ = try? await stream.response()   // the cancelled call ends (keeping its partial) before the store closes
            throw writeFailure
        }
        if !decoderChosen {
            decoder = ContentDecoder(contentEncoding: stream.headers?.first("Content-Encoding"))
        }
        try decoder?.finish()
        try sink.finish()
        if drawing.withLock({ $0 }) {
            reporter?.update(.init(completed: 1, failed: 0, total: 1, bytes: written, expectedBytes: written))
            reporter?.finish()
        }
        let response = try await stream.response()
        // A body file that is not a stored blob is this process's temporary file: removed once written out.
        if case .file(let url) = response.body, response.storedBody == nil, response.storedBodyURL == nil {
            try? FileManager.default.removeItem(at: url)
        }
        if verbose {
            for hop in response.redirects { console.err(ResponseDescription.redirectLine(hop)) }
            if !response.redirects.isEmpty {
                console.err("final URL: \(TerminalText.escaped(response.url.absoluteString))")
            }
            console.err(ResponseDescription.summaryLine(response))
            console.err("Cache-Status: \(response.cacheStatus.fieldValue)")
        }
        return 0
    }
}
