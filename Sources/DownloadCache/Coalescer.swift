import Foundation
import Synchronization
import CacheStore
import HTTPCacheSemantics
import SharedTier

/// Runs at most one operation per key at a time; concurrent callers with the same key wait for it.
///
/// Each waiter gets the shared result, or its own `.cancelled` error when its task is cancelled; the shared
/// operation is cancelled only when its last waiter leaves. A successful value that `mayShare` refuses goes only
/// to the caller that started the operation: every other waiter then runs its own operation, uncoalesced.
final class Coalescer<Value: Sendable>: Sendable {
    typealias Outcome = Result<Value, DownloadError>

    private final class Flight: Sendable {
        struct State {
            var waiters: [UInt64: CheckedContinuation<Outcome, Never>] = [:]
            var cancelled: Set<UInt64> = []
            var result: Outcome?
            var task: Task<Void, Never>?
            var joined = 0
        }
        let state = Mutex(State())
    }

    private let flights = Mutex<[String: Flight]>([:])
    private let nextWaiter = Atomic<UInt64>(0)
    /// Flights cancelled because every waiter was cancelled, until they have ended.
    let abandonedFlights = BackgroundWork()

    /// Number of operations currently running.
    var inFlightCount: Int { flights.withLock { $0.count } }

    /// Number of callers waiting for a running operation, over all keys (the caller that started one counts too).
    var waiterCount: Int {
        flights.withLock { map in map.values.reduce(0) { $0 + $1.state.withLock { $0.waiters.count } } }
    }

    /// Joins the running operation for `key`, or starts `operation` when none runs.
    ///
    /// `mayShare` says whether a successful value of another caller's operation may be handed to this caller;
    /// when it says no, this caller runs `operation` itself (not coalesced, so nothing is shared again).
    /// - Returns: the shared outcome, this caller's own outcome, or `.cancelled` when the calling task is
    ///   cancelled first.
    func run(key: String, operation: @escaping @Sendable () async -> Outcome,
             mayShare: @Sendable (Value) -> Bool = { _ in true }) async -> Outcome {
        await runCollapsing(key: key, operation: operation, mayShare: mayShare).outcome
    }

    /// ``run(key:operation:mayShare:)``, also saying whether the outcome is another caller's operation's
    /// (`collapsed`: this call waited for it instead of running its own; RFC 9211 §2.6's `collapsed`).
    func runCollapsing(key: String, operation: @escaping @Sendable () async -> Outcome,
                       mayShare: @Sendable (Value) -> Bool = { _ in true }) async -> (outcome: Outcome, collapsed: Bool) {
        let outcome = await join(key: key, operation: operation)
        guard !outcome.startedHere, case .success(let value) = outcome.result, !mayShare(value) else {
            return (outcome.result, !outcome.startedHere)
        }
        if Task.isCancelled { return (.failure(Self.cancelledError), false) }
        return (await operation(), false)
    }

    /// Joins or starts the flight for `key`; `startedHere` is whether this call started it.
    private func join(key: String, operation: @escaping @Sendable () async -> Outcome) async -> (result: Outcome, startedHere: Bool) {
        let id = nextWaiter.wrappingAdd(1, ordering: .relaxed).newValue
        let (flight, isNew) = flights.withLock { map -> (Flight, Bool) in
            if let existing = map[key] { return (existing, false) }
            let flight = Flight()
            map[key] = flight
            return (flight, true)
        }
        if isNew {
            let run: @Sendable () async -> Void = {
                let outcome = await operation()
                self.finish(flight, key: key, outcome: outcome)
            }
            // Started on this thread, up to its first suspension (the lookup, then the request handed to the
            // transport): no hop to another thread before the work begins. Still its own task, so cancelling this
            // caller does not cancel the operation the others share.
            let task: Task<Void, Never>
            if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, *) {
                task = Task.immediate(operation: run)
            } else {
                task = Task(operation: run)
            }
            flight.state.withLock { $0.task = task }
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let immediate: Outcome? = flight.state.withLock { state in
                    if let result = state.result { return result }
                    if state.cancelled.contains(id) { return .failure(Self.cancelledError) }
                    state.waiters[id] = continuation
                    state.joined += 1
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            self.cancelWaiter(id, flight: flight, key: key)
        }
        return (result, isNew)
    }

    private static var cancelledError: DownloadError {
        DownloadError(.cancelled, "the download was interrupted before it completed (the calling task was cancelled)", transportError: .cancelled)
    }

    private func finish(_ flight: Flight, key: String, outcome: Outcome) {
        flights.withLock { map in
            if map[key] === flight { map[key] = nil }
        }
        let waiters = flight.state.withLock { state -> [CheckedContinuation<Outcome, Never>] in
            state.result = outcome
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: outcome) }
    }

    private func cancelWaiter(_ id: UInt64, flight: Flight, key: String) {
        let (continuation, abandon) = flight.state.withLock { state -> (CheckedContinuation<Outcome, Never>?, Task<Void, Never>?) in
            guard state.result == nil else { return (nil, nil) }
            let continuation = state.waiters.removeValue(forKey: id)
            if continuation == nil { state.cancelled.insert(id) }
            let abandon = (continuation != nil && state.waiters.isEmpty) ? state.task : nil
            return (continuation, abandon)
        }
        if let abandon {
            flights.withLock { map in
                if map[key] === flight { map[key] = nil }
            }
            abandon.cancel()
            // Its clean-up (an interrupted download keeping its partial body) still runs: closing waits for it.
            abandonedFlights.start { await abandon.value }
        }
        continuation?.resume(returning: .failure(Self.cancelledError))
    }
}

/// An async counting semaphore: at most `limit` holders at once, FIFO, cancellable while waiting.
final class AsyncLimiter: Sendable {
    private struct State {
        var available: Int
        var queue: [(UInt64, CheckedContinuation<Bool, Never>)] = []
        var cancelled: Set<UInt64> = []
    }
    private let state: Mutex<State>
    private let nextID = Atomic<UInt64>(0)
    private let limit: Int

    /// Creates a limiter admitting `limit` (at least 1) holders.
    init(limit: Int) {
        self.limit = max(1, limit)
        state = Mutex(State(available: max(1, limit)))
    }

    /// Whether no slot is held and nobody waits.
    var isIdle: Bool {
        state.withLock { $0.available == limit && $0.queue.isEmpty }
    }

    /// Waits for a slot. - Returns: `false` when the task was cancelled while waiting (no slot held).
    func acquire() async -> Bool {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let granted: Bool? = state.withLock { state in
                    if state.cancelled.remove(id) != nil { return false }
                    if state.available > 0 {
                        state.available -= 1
                        return true
                    }
                    state.queue.append((id, continuation))
                    return nil
                }
                if let granted { continuation.resume(returning: granted) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                if let index = state.queue.firstIndex(where: { $0.0 == id }) {
                    return state.queue.remove(at: index).1
                }
                state.cancelled.insert(id)
                return nil
            }
            waiter?.resume(returning: false)
        }
    }

    /// Returns a slot, waking the longest waiter.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            if state.queue.isEmpty {
                state.available += 1
                return nil
            }
            return state.queue.removeFirst().1
        }
        next?.resume(returning: true)
    }
}

/// One ``AsyncLimiter`` per origin (scheme, host, port): a slow origin never holds back requests to another.
final class OriginLimiters: Sendable {
    private let limiters = Mutex<[String: AsyncLimiter]>([:])
    private let limit: Int

    /// Creates the set; each origin admits `limit` (at least 1) exchanges at once.
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// The limiter for `url`'s origin, created on first use (idle ones are dropped when many accumulate).
    func limiter(for url: URL) -> AsyncLimiter {
        let key = Self.originKey(url)
        return limiters.withLock { map in
            if let known = map[key] { return known }
            if map.count >= 1_024 { map = map.filter { !$0.value.isIdle } }
            let created = AsyncLimiter(limit: limit)
            map[key] = created
            return created
        }
    }

    /// `scheme://host:port` of `url` (lower-cased scheme and host; default port made explicit).
    static func originKey(_ url: URL) -> String {
        let scheme = (url.scheme ?? "").lowercased()
        let host = (url.host ?? "").lowercased()
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : 0)
        return "\(scheme)://\(host):\(port)"
    }
}
