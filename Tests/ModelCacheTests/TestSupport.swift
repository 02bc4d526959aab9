import Foundation
import Synchronization
@testable import ModelCache

/// A settable clock for tests: `now` returns `current` until the test moves it.
final class TestClock: Sendable {
    private let date: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSinceReferenceDate: 800_000_000)) {
        date = Mutex(start)
    }

    var current: Date { date.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        date.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    var now: @Sendable () -> Date { { self.current } }
}

/// Collects the events caches report through `ModelCache.events` (each stream read by its own task, so an event
/// shows up in `all` shortly after it was reported: check with `eventually`).
final class EventRecorder: Sendable {
    private let events = Mutex<[ModelCacheEvent]>([])
    private let listeners = Mutex<[Task<Void, Never>]>([])

    /// Records every event of `cache` from now on.
    func record(_ cache: ModelCache) {
        let stream = cache.events
        let listener = Task { [weak self] in
            for await event in stream { self?.events.withLock { $0.append(event) } }
        }
        listeners.withLock { $0.append(listener) }
    }

    deinit {
        listeners.withLock { $0.forEach { $0.cancel() } }
    }

    var all: [ModelCacheEvent] { events.withLock { $0 } }

    var discardReasons: [ModelDiscardReason] {
        all.compactMap { $0.kind == .discarded ? $0.discardReason : nil }
    }

    var refreshFailures: Int {
        all.filter { $0.kind == .refreshFailed }.count
    }
}

/// A one-shot gate: `wait()` suspends until `open()` is called (immediately once open).
final class AsyncGate: Sendable {
    private let state = Mutex<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.isOpen { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A counter usable from many tasks.
final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

/// Polls `condition` every millisecond until it holds, at most 60,000 polls and 60 seconds.
/// It sleeps between polls because, on a loaded two-core machine, a burst of `Task.yield()`
/// can end before the tasks being waited for were ever scheduled; the bound is generous because
/// other tests running in parallel can hold both threads of the cooperative pool for seconds.
func eventually(_ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(60)
    for _ in 0..<60_000 {
        if condition() { return true }
        if ContinuousClock.now > deadline { break }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}

/// A fresh temporary directory; the caller removes it.
func makeTemporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("modelcache-tests-\(UUID().uuidString)", isDirectory: true)
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Bundles a cache, its directory, clock and event log; `cleanUp()` removes the directory.
struct Fixture {
    let directory: URL
    let clock: TestClock
    let events: EventRecorder
    let cache: ModelCache

    init(directory: URL = makeTemporaryDirectory(), clock: TestClock = TestClock(),
         configure: (inout ModelCache.Configuration) -> Void = { _ in }) throws {
        self.directory = directory
        self.clock = clock
        self.events = EventRecorder()
        self.cache = try ModelCache(configuration: Self.configuration(directory: directory, clock: clock,
                                                                       configure: configure))
        events.record(cache)
    }

    static func configuration(directory: URL, clock: TestClock,
                              configure: (inout ModelCache.Configuration) -> Void = { _ in })
        -> ModelCache.Configuration {
        var configuration = ModelCache.Configuration(directory: directory)
        configuration.now = clock.now
        configuration.memoryPressureNotifications = []
        configure(&configuration)
        return configuration
    }

    /// Another cache on the same directory and clock (e.g. "the next launch").
    func reopen(configure: (inout ModelCache.Configuration) -> Void = { _ in }) throws -> ModelCache {
        let cache = try ModelCache(configuration: Self.configuration(directory: directory, clock: clock,
                                                                     configure: configure))
        events.record(cache)
        return cache
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: directory)
    }
}

// MARK: - Sample models

struct MenuItem: Codable, Sendable, Equatable, VersionedModel {
    static let modelVersion = 3
    var id: Int
    var name: String
    var price: Double
    var tags: [String]

    static func sample(_ count: Int) -> [MenuItem] {
        (0..<count).map { MenuItem(id: $0, name: "Item \($0)", price: Double($0) * 1.25, tags: ["t\($0 % 7)"]) }
    }
}

struct Profile: Codable, Sendable, Equatable {
    var name: String
    var joined: Date
}

/// Same shape as `MenuItem` but with an incompatible field, to simulate a changed model.
struct MenuItemV4: Codable, Sendable, Equatable, VersionedModel {
    static let modelVersion = 3   // the developer forgot to bump: decoding must still fail safely
    var id: Int
    var title: String
}

/// A value whose encoding always fails.
struct Unencodable: Codable, Sendable {
    struct Refused: Error {}
    init() {}
    init(from decoder: any Decoder) throws {}
    func encode(to encoder: any Encoder) throws { throw Refused() }
}
