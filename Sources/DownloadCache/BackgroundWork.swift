import Foundation
import Synchronization
import CacheStore
import HTTPCacheSemantics
import SharedTier

/// The cache's background tasks (stale-while-revalidate refreshes), tracked so a caller can await them before
/// closing the store or exiting (a refresh still running when the process exits would be lost).
final class BackgroundWork: Sendable {
    private struct State {
        var next: UInt64 = 0
        var tasks: [UInt64: Task<Void, Never>] = [:]
    }
    private let state = Mutex(State())

    /// Number of background tasks still running.
    var count: Int { state.withLock { $0.tasks.count } }

    /// Starts `operation` as an unstructured task and tracks it until it finishes.
    func start(_ operation: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            let id = state.next
            state.next &+= 1
            // Created under the lock: the task's own removal (below) cannot run before its insertion.
            state.tasks[id] = Task { [self] in
                await operation()
                self.state.withLock { _ = $0.tasks.removeValue(forKey: id) }
            }
        }
    }

    /// Returns once no background task runs, including tasks started while waiting.
    func waitUntilIdle() async {
        while true {
            let running = state.withLock { Array($0.tasks.values) }
            if running.isEmpty { return }
            for task in running { await task.value }
        }
    }
}
