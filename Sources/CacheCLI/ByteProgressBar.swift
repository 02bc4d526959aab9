import Foundation
import DownloadCache
import Synchronization

/// `get`'s byte progress bar, drawn on stderr as curl draws its progress meter: when stderr is a terminal and
/// the body does not go to a terminal (stdout a pipe or a file, or `-o FILE`), and only once the body is over
/// ``GetStreaming/progressThresholdBytes`` (received, or announced by its length). Never under `-s` or
/// `--no-progress-meter`, never when stderr is not a terminal (a log file gets no `\r` redraws). It counts the
/// bytes the transfer received of what it announced (``attach(to:)``) while a transfer carries the body, else
/// the bytes written out (``wrote(_:of:)``): a stored body copied from the cache (a hit, or after a 304) moves the
/// bar as a download does. A resumed download counts what its 206 brings, of what that 206 announced: the bytes
/// kept from before are written out too, but counting them against the 206's length would run past 100 %.
final class ByteProgressBar: Sendable {
    private let reporter: ProgressReporter
    private struct State {
        /// Whether the bar was drawn (the body turned out large): only then does ``finish(bytes:)`` end its line.
        var drawing = false
        /// The most bytes the transfer reported receiving, and the length it announced.
        var received: Int64 = 0
        var announced: Int64?
        /// The most bytes written out, and the size the writer was told.
        var written: Int64 = 0
        var size: Int64?

        /// Whether the transfer carries body bytes (it received some or announced some): its count is shown.
        var transferLeads: Bool { received > 0 || (announced ?? 0) > 0 }
        /// The count and total shown.
        var shown: (bytes: Int64, expected: Int64?) { transferLeads ? (received, announced) : (written, size) }
    }
    private let state = Mutex(State())

    /// Whether a bar may be drawn at all: `allowed` (neither `-s` nor `--no-progress-meter`), stderr a terminal,
    /// and the body not written to a terminal (`bodyToStdout` and stdout a terminal): as curl's meter, which is
    /// left out when the response data goes to the terminal, so the two never mix on one screen.
    static func isShown(allowed: Bool, console: Console, bodyToStdout: Bool) -> Bool {
        allowed && console.stderrIsTerminal && !(bodyToStdout && console.stdoutIsTerminal)
    }

    /// Whether a body with `received` bytes so far and `expected` announced (nil: unknown) is large enough for
    /// the bar (over ``GetStreaming/progressThresholdBytes``).
    static func isLarge(received: Int64, expected: Int64?) -> Bool {
        max(received, expected ?? 0) > GetStreaming.progressThresholdBytes
    }

    /// A bar for this run, or nil when ``isShown(allowed:console:bodyToStdout:)`` says none may be drawn.
    init?(allowed: Bool, context: CommandContext, bodyToStdout: Bool) {
        guard Self.isShown(allowed: allowed, console: context.console, bodyToStdout: bodyToStdout) else { return nil }
        reporter = ProgressReporter(console: context.console, style: .bytes, start: context.environment.now(),
                                    now: context.environment.now)
    }

    /// Chains the bar into `options.progress` (after any callback already there).
    func attach(to options: inout RequestOptions) {
        let earlier = options.progress
        options.progress = { [self] progress in
            earlier?(progress)
            show(progress.bytesReceived, expected: progress.bytesExpected, fromTransfer: true)
        }
    }

    /// Reports that `bytes` of the body were written out so far, of `size` bytes (nil: not known yet). Moves the
    /// bar only past what the transfer reported: for a body copied from the cache, where no transfer runs.
    func wrote(_ bytes: Int64, of size: Int64?) {
        show(bytes, expected: size, fromTransfer: false)
    }

    private func show(_ bytes: Int64, expected: Int64?, fromTransfer: Bool) {
        state.withLock { state in
            if fromTransfer {
                state.received = max(state.received, bytes)
                state.announced = expected
            } else {
                state.written = max(state.written, bytes)
                if let expected { state.size = expected }
            }
            let now = state.shown
            guard Self.isLarge(received: now.bytes, expected: now.expected) else { return }
            state.drawing = true
            reporter.update(.init(completed: 0, failed: 0, total: 1, bytes: now.bytes, expectedBytes: now.expected))
        }
    }

    /// Ends the bar's line if it was drawn: full with `bytes` (the body is complete), as it stood otherwise.
    func finish(bytes: Int64? = nil) {
        guard state.withLock({ $0.drawing }) else { return }
        if let bytes { reporter.update(.init(completed: 1, failed: 0, total: 1, bytes: bytes, expectedBytes: bytes)) }
        reporter.finish()
    }
}
