import Foundation
import DownloadCache
import Synchronization

/// `get`'s byte progress bar, drawn on stderr as curl draws its progress meter: when stderr is a terminal,
/// whatever stdout is (a terminal, a pipe, a file), and only once the body is over
/// ``GetStreaming/progressThresholdBytes`` (received, or announced by its length). Never under `-s` or
/// `--no-progress-meter`, never when stderr is not a terminal (a log file gets no `\r` redraws). It counts the
/// bytes the transfer received (``attach(to:)``) or, when those run behind, the bytes written out
/// (``wrote(_:of:)``): a stored body copied from the cache moves the bar as a download does.
final class ByteProgressBar: Sendable {
    private let reporter: ProgressReporter
    private struct State {
        /// Whether the bar was drawn (the body turned out large): only then does ``finish(bytes:)`` end its line.
        var drawing = false
        /// The most bytes reported so far, by the transfer or by the writer.
        var bytes: Int64 = 0
        /// The body's length: announced by the transfer, else the size the writer was told.
        var expected: Int64?
        /// Whether the transfer reported progress (its announced length then wins over the writer's).
        var fromTransfer = false
    }
    private let state = Mutex(State())

    /// Whether a bar may be drawn at all: `allowed` (neither `-s` nor `--no-progress-meter`) and stderr a terminal.
    /// stdout does not matter.
    static func isShown(allowed: Bool, console: Console) -> Bool {
        allowed && console.stderrIsTerminal
    }

    /// Whether a body with `received` bytes so far and `expected` announced (nil: unknown) is large enough for
    /// the bar (over ``GetStreaming/progressThresholdBytes``).
    static func isLarge(received: Int64, expected: Int64?) -> Bool {
        max(received, expected ?? 0) > GetStreaming.progressThresholdBytes
    }

    /// A bar for this run, or nil when ``isShown(allowed:console:)`` says none may be drawn.
    init?(allowed: Bool, context: CommandContext) {
        guard Self.isShown(allowed: allowed, console: context.console) else { return nil }
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
                state.fromTransfer = true
                state.expected = expected
            } else if !state.fromTransfer, let expected {
                state.expected = expected
            }
            guard bytes >= state.bytes else { return }
            state.bytes = bytes
            guard Self.isLarge(received: bytes, expected: state.expected) else { return }
            state.drawing = true
            reporter.update(.init(completed: 0, failed: 0, total: 1, bytes: bytes, expectedBytes: state.expected))
        }
    }

    /// Ends the bar's line if it was drawn: full with `bytes` (the body is complete), as it stood otherwise.
    func finish(bytes: Int64? = nil) {
        guard state.withLock({ $0.drawing }) else { return }
        if let bytes { reporter.update(.init(completed: 1, failed: 0, total: 1, bytes: bytes, expectedBytes: bytes)) }
        reporter.finish()
    }
}
