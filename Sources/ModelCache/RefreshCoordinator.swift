import Foundation
import Synchronization

/// Coalesces concurrent refreshes of one key: the first caller starts the operation, later callers wait for
/// the same result (one fetch, every waiter gets its value or its error).
///
/// The shared work runs in an unstructured `Task`, so a waiter that is cancelled does not cancel the fetch
/// other waiters depend on; the operation finishes and stores its value.
final class RefreshCoordinator: Sendable {
    private struct Flight {
        let id: UInt64
        let task: Task<any Sendable, any Error>
        var callers: Int
    }

    private struct State {
        var nextID: UInt64 = 0
        var flights: [String: Flight] = [:]
    }

    private let state = Mutex(State())

    /// Creates a coordinator with nothing in flight.
    init() {}

    /// Runs `operation` for `key`, or joins the run already in flight for `key`.
    ///
    /// A caller that joins a run of another result type (the same key read as two types at once) runs its
    /// own operation instead. Throws whatever the operation threw.
    func run<Result: Sendable>(
        key: String,
        _ operation: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        let task = state.withLock { state -> Task<any Sendable, any Error> in
            if var flight = state.flights[key] {
                flight.callers += 1
                state.flights[key] = flight
                return flight.task
            }
            state.nextID &+= 1
            let id = state.nextID
            let task = Task<any Sendable, any Error> {
                defer { self.finish(key: key, id: id) }
                return try await operation()
            }
            state.flights[key] = Flight(id: id, task: task, callers: 1)
            return task
        }
        let shared = try await task.value
        if let result = shared as? Result { return result }
        return try await operation()
    }

    /// Number of callers sharing the run in flight for `key` (0 when none); for tests and diagnostics.
    func callers(forKey key: String) -> Int {
        state.withLock { $0.flights[key]?.callers ?? 0 }
    }

    /// Number of keys with a run in flight.
    var inFlightCount: Int {
        state.withLock { $0.flights.count }
    }

    private func finish(key: String, id: UInt64) {
        state.withLock { state in
            if state.flights[key]?.id == id { state.flights[key] = nil }
        }
    }
}
