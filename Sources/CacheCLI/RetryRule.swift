import Foundation
import DownloadCache
import HTTPCacheSemantics

/// `--retry N` and `--retry-delay SECONDS`: how `get` tries again after a transient failure, as curl does.
///
/// Transient (curl's list): a timeout or stall, a refused or lost connection, a host name that did not
/// resolve, and the statuses 408, 429, 500, 502, 503 and 504. The wait before try n (from 1) is the answer's
/// `Retry-After` (delay-seconds or an HTTP-date, RFC 9110 §10.2.3) when it has one, else `--retry-delay`, else
/// 1 s doubled each time; never more than ``maximumDelay``. A timed-out transfer keeps its partial entry, so
/// the next try resumes it (Range + If-Range) instead of starting again.
struct RetryRule: Sendable, Equatable {
    /// The options, in help order.
    static let options: [OptionSpec] = [
        OptionSpec("retry", .value("n"),
                   help: "Try again up to N times after a timeout, a failed connection or an HTTP 408/429/500/502/503/504 (waits 1 s, doubling; Retry-After honoured; at most 60 s)."),
        OptionSpec("retry-delay", .value("seconds"), help: "With --retry, wait this long between tries instead of doubling (Retry-After still wins)."),
    ]

    /// The longest wait between two tries, in seconds (a `Retry-After` asking for more is cut to this).
    static let maximumDelay: TimeInterval = 60
    /// Statuses worth another try (curl's `--retry` list).
    static let transientStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// How many tries may follow the first (0: none).
    var count: Int
    /// The fixed wait between tries, in seconds; nil: 1 s doubled each time.
    var fixedDelay: TimeInterval?

    /// Reads `--retry` and `--retry-delay`.
    /// - Throws: ``UsageError`` naming a bad value.
    init(_ parsed: ParsedArguments) throws(UsageError) {
        count = try parsed.integer("retry", in: 0...1_000) ?? 0
        fixedDelay = try parsed.seconds("retry-delay", maximum: Self.maximumDelay, maximumLabel: "1 minute")
    }

    /// A rule trying `count` more times with `fixedDelay` (tests).
    init(count: Int, fixedDelay: TimeInterval? = nil) {
        self.count = count
        self.fixedDelay = fixedDelay
    }

    /// Whether a failed call is worth another try.
    static func isTransient(_ error: DownloadError) -> Bool {
        switch FailureKind(error) {
        case .timeout, .connect, .dns: return true
        default: return false
        }
    }

    /// Seconds to wait before try `attempt` (1 for the first retry), given the `Retry-After` value of the
    /// answer that is retried (nil when none), at `now`.
    func delay(attempt: Int, retryAfter: String?, now: Date) -> TimeInterval {
        if let retryAfter = retryAfter?.trimmingCharacters(in: .whitespaces), !retryAfter.isEmpty {
            if ParsedArguments.isDecimal(retryAfter, fraction: false) {
                return min(Self.maximumDelay, Double(retryAfter) ?? Self.maximumDelay)
            }
            if let date = HTTPDate.parse(retryAfter) {
                return min(Self.maximumDelay, max(0, date.timeIntervalSince(now)))
            }
        }
        if let fixedDelay { return fixedDelay }
        return min(Self.maximumDelay, Double(1 << min(max(0, attempt - 1), 10)))
    }

    /// `0.5 s` below ten seconds, else `42s` / `1m00s`.
    static func text(_ seconds: TimeInterval) -> String {
        seconds < 10 ? String(format: "%.1f s", seconds) : Formatting.duration(seconds)
    }

    /// Waits before try `attempt`, after saying why on stderr.
    /// - Throws: ``CommandFailure`` (`.cancelled`) when the wait is interrupted (Ctrl-C).
    func wait(attempt: Int, reason: String, retryAfter: String?, context: CommandContext) async throws(CommandFailure) {
        let seconds = delay(attempt: attempt, retryAfter: retryAfter, now: context.environment.now())
        let left = count - attempt
        context.console.err("Warning: \(TerminalText.escaped(reason)); trying again in \(Self.text(seconds)) "
                            + "(\(left) \(left == 1 ? "retry" : "retries") left)")
        do { try await Task.sleep(for: .milliseconds(Int(seconds * 1000))) } catch {
            throw CommandFailure("interrupted while waiting to try again: \(reason)", kind: .cancelled)
        }
    }
}
