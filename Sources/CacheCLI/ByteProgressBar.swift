import Foundation
import DownloadCache
import Synchronization

/// `get`'s byte progress bar, drawn on stderr as curl draws its progress meter: when stderr is a terminal,
/// whatever stdout is (a terminal, a pipe, a file), and only once the body is over
/// ``GetStreaming/progressThresholdBytes`` (received, or announced by its length). Never under `-s` or
/// `--no-progress-meter`, never when stderr is not a terminal (a log file gets no `\r` redraws).
final class ByteProgressBar: Sendable {
    private let reporter: ProgressReporter
    /// Whether the bar was drawn (the body turned out large): only then does ``finish(bytes:)`` end its line.
    private let drawing = Mutex(false)

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
            guard Self.isLarge(received: progress.bytesReceived, expected: progress.bytesExpected) else { return }
            drawing.withLock { $0 = true }
            reporter.update(.init(completed: 0, failed: 0, total: 1, bytes: progress.bytesReceived,
                                  expectedBytes: progress.bytesExpected))
        }
    }

    /// Ends the bar's line if it was drawn: full with `bytes` (the body is complete), as it stood otherwise.
    func finish(bytes: Int64? = nil) {
        guard drawing.withLock({ $0 }) else { return }
        if let bytes { reporter.update(.init(completed: 1, failed: 0, total: 1, bytes: bytes, expectedBytes: bytes)) }
        reporter.finish()
    }
}
