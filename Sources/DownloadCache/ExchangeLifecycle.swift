import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
import CacheStore
import HTTPCacheSemantics
import SharedTier
#endif

/// The part of an exchange's locked state that tracks its URLSession task's lifecycle.
protocol ExchangeTaskState {
    /// The task, once started.
    var task: URLSessionTask? { get set }
    /// True when the total timeout fired before the task finished (a cancellation then reads as a timeout).
    var expired: Bool { get set }
    /// True once the task's completion was handled.
    var finished: Bool { get set }
    /// True when `cancel()` was called (possibly before the task was resumed).
    var cancelRequested: Bool { get set }
    /// True once the task was resumed.
    var resumed: Bool { get set }
    /// True when the stall rule cancelled the task (a cancellation then reads as stalled).
    var stalled: Bool { get set }
}

/// The task lifecycle both URLSession exchanges (``DataExchange``, ``TransportExchange``) share: the total
/// timeout, resuming with a cancel that arrived early, and cancelling.
protocol TaskLifecycleExchange: RoutedExchange {
    associatedtype TaskState: ExchangeTaskState
    /// Runs `body` with the exchange's state under its lock.
    func withTaskState<R: Sendable>(_ body: (inout TaskState) -> R) -> R
    /// Ends the exchange as cancelled without waiting for URLSession's completion, when a cancelled task has not
    /// completed after ``cancelGrace`` seconds; a no-op where the completion cannot be answered early.
    func abandonAfterCancel()
}

/// Seconds a cancelled task is given to complete before it is cancelled again, and three times that before the
/// exchange is abandoned: FoundationNetworking can lose a `cancel()` that races the task's start on its work queue
/// (seen on loaded machines: the task then ran until a 30 s stall rule ended it).
let cancelGrace: Double = 1

extension TaskLifecycleExchange {
    /// Cancels `task` and marks the exchange expired when it is still running `request.timeout` seconds from now
    /// (no timer when the timeout is nil or not positive).
    func armTotalTimeout(_ task: URLSessionTask) {
        guard let total = request.timeout, total > 0 else { return }
        let box = UncheckedTask(task: task)
        DispatchQueue.global().asyncAfter(deadline: .now() + total) { [weak self] in
            guard let self else { return }
            let running = self.withTaskState { state -> Bool in
                if !state.finished { state.expired = true }
                return !state.finished
            }
            if running { self.cancelUntilFinished(box) }
        }
    }

    /// Applies `request.stallRule` to `task`: once per window it compares the bytes received and sent with the
    /// count at the window's start, and cancels the task (marking the exchange stalled) when fewer than the
    /// rule's minimum moved. No watcher without an active rule. Runs on Dispatch (not the cooperative pool, which
    /// a busy process may starve), like the total timeout.
    func armStallRule(_ task: URLSessionTask) {
        guard let rule = request.stallRule, rule.isActive else { return }
        checkStall(UncheckedTask(task: task), rule: rule, window: min(rule.seconds, 86_400 * 365), since: 0)
    }

    /// One window of ``armStallRule(_:)``: `since` is the byte count at the window's start.
    private func checkStall(_ box: UncheckedTask, rule: StallRule, window: TimeInterval, since: Int64) {
        DispatchQueue.global().asyncAfter(deadline: .now() + window) { [weak self] in
            guard let self else { return }
            let moved = box.task.countOfBytesReceived + box.task.countOfBytesSent
            let verdict = self.withTaskState { state -> Bool? in
                if state.finished { return nil }
                if moved - since < rule.minimumBytes {
                    state.stalled = true
                    return true
                }
                return false
            }
            switch verdict {
            case nil: return
            case true?: self.cancelUntilFinished(box)
            case false?: self.checkStall(box, rule: rule, window: window, since: moved)
            }
        }
    }

    /// Resumes `task`. A cancel that arrived before resume() only recorded itself (cancelling a task that was
    /// never resumed does not stick on Linux): it is applied now.
    func resume(_ task: URLSessionTask) {
        task.resume()
        let cancelled = withTaskState { state -> Bool in
            state.resumed = true
            return state.cancelRequested
        }
        if cancelled { cancelUntilFinished(UncheckedTask(task: task)) }
    }

    /// Cancels the exchange (the caller's task was cancelled); before the task is resumed, only records it.
    func cancel() {
        let task = withTaskState { state -> UncheckedTask? in
            state.cancelRequested = true
            return state.resumed ? state.task.map(UncheckedTask.init(task:)) : nil
        }
        if let task { cancelUntilFinished(task) }
    }

    /// Cancels `box.task`, cancels it again every ``cancelGrace`` seconds while it has not completed, and
    /// abandons the exchange after three retries. Runs on Dispatch, like the timeout and the stall rule: a
    /// FoundationNetworking `cancel()` waits for the session's work queue, which a fast body keeps busy for
    /// seconds, and must block neither the delegate queue nor a thread of the cooperative pool.
    private func cancelUntilFinished(_ box: UncheckedTask, retries: Int = 3) {
        DispatchQueue.global().async { box.task.cancel() }
        DispatchQueue.global().asyncAfter(deadline: .now() + cancelGrace) { [weak self] in
            guard let self, !self.withTaskState({ $0.finished }) else { return }
            if retries > 0 {
                self.cancelUntilFinished(box, retries: retries - 1)
            } else {
                self.abandonAfterCancel()
            }
        }
    }
}
