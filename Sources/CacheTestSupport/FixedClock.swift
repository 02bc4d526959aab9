import Foundation
import Synchronization

/// A settable clock for tests: time moves only when the test says so.
///
/// Pass ``now`` wherever a `@Sendable () -> Date` clock is configured (DownloadCache, CacheStore).
public final class FixedClock: Sendable {
    private let current: Mutex<Date>

    /// Creates a clock stopped at `date` (default: 2026-01-01T00:00:00Z, a round, fixed instant).
    public init(_ date: Date = Date(timeIntervalSince1970: 1_767_225_600)) {
        current = Mutex(date)
    }

    /// The clock's current instant.
    public var date: Date {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    /// Moves the clock forward by `seconds` (negative moves it back).
    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    /// Sets the clock to `date`.
    public func set(_ date: Date) {
        current.withLock { $0 = date }
    }

    /// A `@Sendable` closure reading this clock, the shape the configurations take.
    public var now: @Sendable () -> Date {
        { [self] in self.date }
    }
}
