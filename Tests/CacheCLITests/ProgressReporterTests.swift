import Foundation
import Synchronization
import Testing
@testable import CacheCLI
import CacheTestSupport

/// The prefetch progress display: the bar, its rate and ETA, redraws on a terminal, plain lines elsewhere.
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

    @Test func bytesReadFromTheCacheShowNoTransferRate() {
        // Every byte so far came from the cache: no rate to show.
        let cached = ProgressReporter.summary(Snapshot(completed: 3, failed: 0, total: 3, bytes: 6_310_000,
                                                       networkBytes: 0), elapsed: 0.01)
        #expect(cached == "3/3  6.3 MB  cached  ETA 0s")
        // 1 MB of the 5 MB came from the network in 2 s: the rate is of that 1 MB.
        let mixed = ProgressReporter.summary(Snapshot(completed: 2, failed: 0, total: 4, bytes: 5_000_000,
                                                      networkBytes: 1_000_000), elapsed: 2)
        #expect(mixed.hasPrefix("2/4  5.0 MB  500.0 KB/s  ETA "))
    }

    @Test func theByteETAFollowsTheNetworkRateOnly() {
        // 4 MB read from the cache at once and 1 MB received from the network in 2 s; 5 MB to go at 0.5 MB/s.
        let s = Snapshot(completed: 1, failed: 0, total: 2, bytes: 5_000_000, expectedBytes: 10_000_000,
                         networkBytes: 1_000_000)
        #expect(ProgressReporter.eta(s, elapsed: 2) == Formatting.duration(10))
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

    /// One large URL shows the bytes received while it downloads, not only when it completes.
    @Test func oneLargeURLShowsBytesBeforeItFinishes() async throws {
        let origin = try await OriginServer.start()
        defer { origin.stop() }
        let cli = try CLIHarness()
        defer { cli.cleanUp() }
        try await origin.configure(path: "/big", headers: [("Cache-Control", "max-age=60")], size: 640 << 10,
                                   chunkDelay: 0.03)
        let run = await cli.run(["prefetch", "-"], stdin: origin.url("/big").absoluteString, terminal: true)
        #expect(run.code == 0)
        let frames = run.err.split(separator: "\r").map(String.init)
        let moving = frames.filter { $0.contains("  0/1  ") && !$0.contains("  0/1  0 B  ") }
        #expect(!moving.isEmpty, "no frame showed bytes before completion: \(frames)")
        #expect(frames.last?.contains("1/1  655.4 KB") == true)
    }

    /// Lines are written in the order of their updates even when a write is slow: the first write blocks until the
    /// second update returned (or 0.3 s passed), and the second line still comes after it.
    @Test func plainLinesAreWrittenInOrderEvenWhenAWriteIsSlow() async {
        final class Gate: Sendable {
            let entered = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let first = Mutex(true)
            let lines = Mutex<[String]>([])
        }
        let gate = Gate()
        let console = Console(writeOut: { _ in }, writeErr: { data in
            if gate.first.withLock({ f in defer { f = false }; return f }) {
                gate.entered.signal()
                _ = gate.release.wait(timeout: .now() + 0.3)
            }
            gate.lines.withLock { $0.append(String(decoding: data, as: UTF8.self)) }
        })
        let start = Date(timeIntervalSince1970: 1_000)
        let reporter = ProgressReporter(console: console, start: start, now: { start.addingTimeInterval(1) })
        let a = Thread { reporter.update(.init(completed: 1, failed: 0, total: 10, bytes: 10)) }
        a.start()
        _ = gate.entered.wait(timeout: .now() + 5)
        let bDone = DispatchSemaphore(value: 0)
        let b = Thread { reporter.update(.init(completed: 2, failed: 0, total: 10, bytes: 20)); bDone.signal() }
        b.start()
        _ = bDone.wait(timeout: .now() + 5)
        gate.release.signal()
        for _ in 0..<500 where gate.lines.withLock({ $0.count }) < 2 { usleep(1_000) }
        let lines = gate.lines.withLock { $0 }
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("prefetch: 1/10") == true)
        #expect(lines.last?.hasPrefix("prefetch: 2/10") == true)
    }

    /// An update with a lower count than one already shown is not shown.
    @Test func countsNeverGoBackwards() {
        let capture = CapturedConsole(terminal: false)
        let start = Date(timeIntervalSince1970: 1_000)
        let reporter = ProgressReporter(console: capture.console, start: start, now: { start.addingTimeInterval(1) })
        reporter.update(.init(completed: 4, failed: 0, total: 5, bytes: 400))
        reporter.update(.init(completed: 2, failed: 0, total: 5, bytes: 200))
        reporter.update(.init(completed: 5, failed: 0, total: 5, bytes: 300))
        #expect(capture.stderr == "prefetch: 4/5  400 B  400 B/s  ETA 0s\nprefetch: 5/5  400 B  400 B/s  ETA 0s\n")
    }

    /// Not on a terminal, a line every two seconds while the bytes of one URL arrive.
    @Test func plainLinesEveryTwoSecondsWhileBytesArrive() {
        let capture = CapturedConsole(terminal: false)
        let clock = Clock()
        let reporter = ProgressReporter(console: capture.console, start: clock.now(), now: clock.now)
        for i in 1...10 {
            clock.advance(0.5)
            reporter.update(.init(completed: 0, failed: 0, total: 1, bytes: Int64(i * 1000), expectedBytes: 20_000))
        }
        let lines = capture.stderr.split(separator: "\n")
        #expect(lines == ["prefetch: 0/1  4.0 KB  2.0 KB/s  ETA 8s", "prefetch: 0/1  8.0 KB  2.0 KB/s  ETA 6s"])
    }

    @Test func getsBarCountsBytesNotURLs() {
        let half = ProgressReporter.Snapshot(completed: 0, failed: 0, total: 1, bytes: 5_000_000, expectedBytes: 10_000_000)
        #expect(ProgressReporter.byteBar(half, elapsed: 5, width: 10)
                == "[#####-----]  5.0 MB / 10.0 MB  1.0 MB/s  ETA 5s")
        let unknown = ProgressReporter.Snapshot(completed: 0, failed: 0, total: 1, bytes: 3_000_000)
        #expect(ProgressReporter.byteBar(unknown, elapsed: 2) == "3.0 MB  1.5 MB/s")
        let done = ProgressReporter.Snapshot(completed: 1, failed: 0, total: 1, bytes: 10_000_000, expectedBytes: 10_000_000)
        #expect(ProgressReporter.byteBar(done, elapsed: 4, width: 4) == "[####]  10.0 MB / 10.0 MB  2.5 MB/s  ETA 0s")
        #expect(!ProgressReporter.byteBar(half, elapsed: 5).contains("0/1"))
    }
}
