import Foundation
import Synchronization
import Testing
@testable import CacheCLI

@Suite struct ProgressReporterTests {
    typealias Snapshot = ProgressReporter.Snapshot

    @Test func barShowsCountBytesRateAndETA() {
        let line = ProgressReporter.bar(Snapshot(completed: 25, failed: 0, total: 100, bytes: 2_500_000), elapsed: 2)
        #expect(line == "[######------------------]  25/100  2.5 MB  1.2 MB/s  ETA 6s")
    }

    @Test func barFillsByBytesWhenTheTotalIsKnown() {
        // 1 of 4 URLs done, but 3 MB of 4 MB received: the bar and the ETA follow the bytes.
        let line = ProgressReporter.bar(Snapshot(completed: 1, failed: 0, total: 4, bytes: 3_000_000,
                                                 expectedBytes: 4_000_000), elapsed: 3)
        #expect(line == "[##################------]  1/4  3.0 MB  1.0 MB/s  ETA 1s")
    }

    @Test func summaryMentionsFailuresAndFinishedETA() {
        let text = ProgressReporter.summary(Snapshot(completed: 8, failed: 2, total: 10, bytes: 999), elapsed: 1)
        #expect(text == "10/10  999 B  999 B/s  ETA 0s  2 failed")
    }

    @Test func etaUnknownBeforeFirstResult() {
        #expect(ProgressReporter.eta(Snapshot(completed: 0, failed: 0, total: 5, bytes: 0), elapsed: 3) == "--")
        #expect(ProgressReporter.rate(bytes: 10, elapsed: 0) == "-- B/s")
    }

    /// A clock the test moves by hand.
    final class Clock: Sendable {
        let time = Mutex(Date(timeIntervalSince1970: 1_000))
        func advance(_ s: TimeInterval) { time.withLock { $0 += s } }
        var now: @Sendable () -> Date { { self.time.withLock { $0 } } }
    }

    @Test func terminalRedrawsWithCarriageReturnAndThrottles() {
        let capture = CapturedConsole(terminal: true)
        let clock = Clock()
        let reporter = ProgressReporter(console: capture.console, start: clock.now(), now: clock.now)
        clock.advance(1)
        reporter.update(Snapshot(completed: 1, failed: 0, total: 4, bytes: 100))
        reporter.update(Snapshot(completed: 2, failed: 0, total: 4, bytes: 200))   // same instant: throttled
        clock.advance(1)
        reporter.update(Snapshot(completed: 4, failed: 0, total: 4, bytes: 400))
        reporter.finish()
        let err = capture.stderr
        #expect(err.components(separatedBy: "\r").count - 1 == 2)
        #expect(err.contains("1/4"))
        #expect(!err.contains("2/4"))
        #expect(err.hasSuffix("4/4  400 B  200 B/s  ETA 0s\u{1B}[K\n"))
        #expect(capture.stdout.isEmpty)
    }

    @Test func plainLinesAtEachTenthWhenNotATerminal() {
        let capture = CapturedConsole(terminal: false)
        let clock = Clock()
        let reporter = ProgressReporter(console: capture.console, start: clock.now(), now: clock.now)
        for i in 1...20 {
            clock.advance(0.5)
            reporter.update(Snapshot(completed: i, failed: 0, total: 20, bytes: Int64(i * 10)))
        }
        reporter.finish()
        let lines = capture.stderr.split(separator: "\n")
        #expect(lines.count == 10)
        #expect(!capture.stderr.contains("\r"))
        #expect(lines.last == "prefetch: 20/20  200 B  20 B/s  ETA 0s")
    }
}
