import Foundation
import Synchronization

/// Draws prefetch progress: a live bar redrawn with `\r` on a terminal, plain lines otherwise.
///
/// On a terminal the bar shows count, bytes, rate and ETA and is redrawn at most every ``redrawInterval``
/// seconds; when stderr is not a terminal one plain line is printed each time another tenth of the URLs is done,
/// and also every ``plainInterval`` seconds while bytes keep arriving (so one large URL shows it is moving).
///
/// Snapshots may come from many threads: each is merged into the last one shown (counts and bytes never go
/// backwards) and written to stderr while the reporter's lock is held, so lines never appear out of order.
package final class ProgressReporter: Sendable {
    /// One snapshot of aggregate progress.
    package struct Snapshot: Sendable, Equatable {
        /// URLs finished successfully.
        package var completed: Int
        /// URLs that failed.
        package var failed: Int
        /// URLs in the job.
        package var total: Int
        /// Body bytes received or read so far (finished URLs plus the downloads in flight).
        package var bytes: Int64
        /// Bytes the whole job will have when done, when known (every unfinished URL is in flight with a
        /// Content-Length); nil when unknown. Used for a byte-based ETA.
        package var expectedBytes: Int64?
        /// The part of ``bytes`` that came from the network (downloads in flight and finished network responses);
        /// rates and the byte-based ETA use only these, so bodies read from the cache do not show as a transfer
        /// rate. nil: all of ``bytes``.
        package var networkBytes: Int64?
        /// Creates a snapshot.
        package init(completed: Int, failed: Int, total: Int, bytes: Int64, expectedBytes: Int64? = nil,
                     networkBytes: Int64? = nil) {
            self.completed = completed
            self.failed = failed
            self.total = total
            self.bytes = bytes
            self.expectedBytes = expectedBytes
            self.networkBytes = networkBytes
        }
        /// Bytes the rates are computed from.
        package var transferredBytes: Int64 { networkBytes ?? bytes }
        /// URLs finished either way.
        package var done: Int { completed + failed }
    }

    private struct State {
        var lastDraw: Date?
        var lastDecile = 0
        var drewBar = false
        /// The merged snapshot so far (monotonic counts and bytes).
        var shown: Snapshot?
    }

    /// Minimum time between two redraws of the live bar, in seconds.
    package let redrawInterval: TimeInterval = 0.1
    /// Seconds between two time-based plain lines (non-terminal) while bytes arrive but no tenth completes.
    package let plainInterval: TimeInterval = 2
    /// What the bar counts.
    package enum Style: Sendable {
        /// URLs done out of the job's (`prefetch`): `120/962  3.4 MB  1.2 MB/s  ETA 12s`.
        case urls
        /// The bytes of one body (`get`): `3.4 MB / 10.0 MB  1.2 MB/s  ETA 6s`, or `3.4 MB  1.2 MB/s` when its
        /// length is unknown.
        case bytes
    }

    private let console: Console
    private let style: Style
    private let start: Date
    private let now: @Sendable () -> Date
    private let state = Mutex(State())

    /// Creates a reporter writing to `console`'s stderr, measuring time with `now` from `start`.
    package init(console: Console, style: Style = .urls, start: Date, now: @escaping @Sendable () -> Date) {
        self.console = console
        self.style = style
        self.start = start
        self.now = now
    }

    /// Records a new snapshot and draws it if it is time to (writing while the lock is held, so concurrent
    /// callers' lines come out in order).
    package func update(_ incoming: Snapshot) {
        let time = now()
        let elapsed = time.timeIntervalSince(start)
        state.withLock { s in
            let snapshot = Self.merge(s.shown, incoming)
            let moved = snapshot.bytes != s.shown?.bytes
            s.shown = snapshot
            if console.stderrIsTerminal {
                if let last = s.lastDraw, time.timeIntervalSince(last) < redrawInterval, snapshot.done < snapshot.total {
                    return
                }
                s.lastDraw = time
                s.drewBar = true
                let line = style == .bytes ? Self.byteBar(snapshot, elapsed: elapsed) : Self.bar(snapshot, elapsed: elapsed)
                console.err("\r" + line + "\u{1B}[K", terminator: "")
                return
            }
            guard snapshot.total > 0 else { return }
            let decile = snapshot.done * 10 / snapshot.total
            let due = moved && time.timeIntervalSince(s.lastDraw ?? start) >= plainInterval
            guard decile > s.lastDecile || (due && snapshot.done < snapshot.total) else { return }
            s.lastDecile = max(s.lastDecile, decile)
            s.lastDraw = time
            console.err("prefetch: " + Self.summary(snapshot, elapsed: elapsed))
        }
    }

    /// `incoming` merged into `shown`: counts and bytes never decrease (a late snapshot from a slower thread,
    /// or a failed download dropping its in-flight bytes, cannot move the display backwards).
    static func merge(_ shown: Snapshot?, _ incoming: Snapshot) -> Snapshot {
        guard let shown else { return incoming }
        var merged = incoming
        merged.completed = max(shown.completed, incoming.completed)
        merged.failed = max(shown.failed, incoming.failed)
        merged.bytes = max(shown.bytes, incoming.bytes)
        if let old = shown.networkBytes, let new = incoming.networkBytes { merged.networkBytes = max(old, new) }
        return merged
    }

    /// Ends the live bar with a newline (nothing to do for plain lines).
    package func finish() {
        if state.withLock({ $0.drewBar }) { console.err("") }
    }

    /// The live bar line: `[#####-----]  120/962  3.4 MB  1.2 MB/s  ETA 12s`. The bar fills by bytes when the
    /// job's total bytes are known (``Snapshot/expectedBytes``), else by URLs done.
    package static func bar(_ s: Snapshot, elapsed: TimeInterval, width: Int = 24) -> String {
        let fraction: Double
        if s.done >= s.total {
            fraction = 1
        } else if let expected = s.expectedBytes, expected > 0 {
            fraction = min(1, Double(s.bytes) / Double(expected))
        } else {
            fraction = s.total > 0 ? Double(s.done) / Double(s.total) : 1
        }
        let filled = max(0, min(width, Formatting.wholeSeconds((fraction * Double(width)).rounded(.down))))
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
        return bar + "  " + summary(s, elapsed: elapsed)
    }

    /// The live bar of one body: `[#####-----]  3.4 MB / 10.0 MB  1.2 MB/s  ETA 6s` when its length is known
    /// (filled by bytes, the ETA from the byte rate), else `3.4 MB  1.2 MB/s` (no bar, no ETA).
    package static func byteBar(_ s: Snapshot, elapsed: TimeInterval, width: Int = 24) -> String {
        let speed = rate(bytes: s.transferredBytes, elapsed: elapsed)
        guard let expected = s.expectedBytes, expected > 0 else {
            return Formatting.bytes(s.bytes) + "  " + speed
        }
        let done = s.done >= s.total || s.bytes >= expected
        let fraction = done ? 1 : min(1, Double(s.bytes) / Double(expected))
        let filled = max(0, min(width, Formatting.wholeSeconds((fraction * Double(width)).rounded(.down))))
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
        let left: String
        if done {
            left = "0s"
        } else if s.transferredBytes > 0, elapsed > 0 {
            left = Formatting.duration(Double(expected - s.bytes) / (Double(s.transferredBytes) / elapsed))
        } else {
            left = "--"
        }
        return "\(bar)  \(Formatting.bytes(s.bytes)) / \(Formatting.bytes(expected))  \(speed)  ETA \(left)"
    }

    /// `120/962  3.4 MB  1.2 MB/s  ETA 12s` (plus `  2 failed` when some failed). The rate counts only bytes
    /// from the network; when every byte so far was read from the cache it says `cached`.
    package static func summary(_ s: Snapshot, elapsed: TimeInterval) -> String {
        let speed = s.transferredBytes == 0 && s.bytes > 0 ? "cached" : rate(bytes: s.transferredBytes, elapsed: elapsed)
        var parts = ["\(s.done)/\(s.total)", Formatting.bytes(s.bytes), speed]
        parts.append("ETA " + eta(s, elapsed: elapsed))
        if s.failed > 0 { parts.append("\(s.failed) failed") }
        return parts.joined(separator: "  ")
    }

    /// Bytes per second as `1.2 MB/s`; `-- B/s` before any time has passed.
    package static func rate(bytes: Int64, elapsed: TimeInterval) -> String {
        guard elapsed > 0 else { return "-- B/s" }
        return Formatting.bytes(Formatting.clampedInt64(Double(bytes) / elapsed)) + "/s"
    }

    /// Estimated seconds left: from the byte rate when the job's total bytes are known (``Snapshot/expectedBytes``),
    /// else from the count rate so far; `--` before anything can be estimated, `0s` when done.
    package static func eta(_ s: Snapshot, elapsed: TimeInterval) -> String {
        if s.done >= s.total { return "0s" }
        if let expected = s.expectedBytes, expected > s.bytes, s.transferredBytes > 0, elapsed > 0 {
            return Formatting.duration(Double(expected - s.bytes) / (Double(s.transferredBytes) / elapsed))
        }
        guard s.done > 0, elapsed > 0 else { return "--" }
        return Formatting.duration(elapsed / Double(s.done) * Double(s.total - s.done))
    }
}
