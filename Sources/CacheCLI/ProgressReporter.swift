import Foundation
import Synchronization

/// Draws prefetch progress: a live bar redrawn with `\r` on a terminal, plain lines otherwise.
///
/// On a terminal the bar shows count, bytes, rate and ETA and is redrawn at most every ``redrawInterval``
/// seconds; when stderr is not a terminal one plain line is printed each time another tenth of the work is done.
public final class ProgressReporter: Sendable {
    /// One snapshot of aggregate progress.
    public struct Snapshot: Sendable, Equatable {
        /// URLs finished successfully.
        public var completed: Int
        /// URLs that failed.
        public var failed: Int
        /// URLs in the job.
        public var total: Int
        /// Body bytes received or read so far.
        public var bytes: Int64
        /// Creates a snapshot.
        public init(completed: Int, failed: Int, total: Int, bytes: Int64) {
            self.completed = completed
            self.failed = failed
            self.total = total
            self.bytes = bytes
        }
        /// URLs finished either way.
        public var done: Int { completed + failed }
    }

    private struct State {
        var lastDraw: Date?
        var lastDecile = 0
        var drewBar = false
    }

    /// Minimum time between two redraws of the live bar, in seconds.
    public let redrawInterval: TimeInterval = 0.1
    private let console: Console
    private let start: Date
    private let now: @Sendable () -> Date
    private let state = Mutex(State())

    /// Creates a reporter writing to `console`'s stderr, measuring time with `now` from `start`.
    public init(console: Console, start: Date, now: @escaping @Sendable () -> Date) {
        self.console = console
        self.start = start
        self.now = now
    }

    /// Records a new snapshot and draws it if it is time to.
    public func update(_ snapshot: Snapshot) {
        let time = now()
        let elapsed = time.timeIntervalSince(start)
        let text: String? = state.withLock { s in
            if console.stderrIsTerminal {
                if let last = s.lastDraw, time.timeIntervalSince(last) < redrawInterval, snapshot.done < snapshot.total {
                    return nil
                }
                s.lastDraw = time
                s.drewBar = true
                return "\r" + Self.bar(snapshot, elapsed: elapsed) + "\u{1B}[K"
            }
            guard snapshot.total > 0 else { return nil }
            let decile = snapshot.done * 10 / snapshot.total
            guard decile > s.lastDecile else { return nil }
            s.lastDecile = decile
            return "prefetch: " + Self.summary(snapshot, elapsed: elapsed) + "\n"
        }
        if let text { console.err(text, terminator: "") }
    }

    /// Ends the live bar with a newline (nothing to do for plain lines).
    public func finish() {
        if state.withLock({ $0.drewBar }) { console.err("") }
    }

    /// The live bar line: `[#####-----]  120/962  3.4 MB  1.2 MB/s  ETA 12s`.
    public static func bar(_ s: Snapshot, elapsed: TimeInterval, width: Int = 24) -> String {
        let fraction = s.total > 0 ? Double(s.done) / Double(s.total) : 1
        let filled = min(width, Int((fraction * Double(width)).rounded(.down)))
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
        return bar + "  " + summary(s, elapsed: elapsed)
    }

    /// `120/962  3.4 MB  1.2 MB/s  ETA 12s` (plus `  2 failed` when some failed).
    public static func summary(_ s: Snapshot, elapsed: TimeInterval) -> String {
        var parts = ["\(s.done)/\(s.total)", Formatting.bytes(s.bytes), rate(bytes: s.bytes, elapsed: elapsed)]
        parts.append("ETA " + eta(s, elapsed: elapsed))
        if s.failed > 0 { parts.append("\(s.failed) failed") }
        return parts.joined(separator: "  ")
    }

    /// Bytes per second as `1.2 MB/s`; `-- B/s` before any time has passed.
    public static func rate(bytes: Int64, elapsed: TimeInterval) -> String {
        guard elapsed > 0 else { return "-- B/s" }
        return Formatting.bytes(Int64(Double(bytes) / elapsed)) + "/s"
    }

    /// Estimated seconds left from the count rate so far; `--` before the first URL finishes, `0s` when done.
    public static func eta(_ s: Snapshot, elapsed: TimeInterval) -> String {
        if s.done >= s.total { return "0s" }
        guard s.done > 0, elapsed > 0 else { return "--" }
        return Formatting.duration(elapsed / Double(s.done) * Double(s.total - s.done))
    }
}
