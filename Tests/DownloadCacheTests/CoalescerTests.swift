import Foundation
import Synchronization
import Testing
@testable import DownloadCache
import CacheStore
import HTTPCacheSemantics

/// `Coalescer`: one operation per key at a time, shared by every concurrent caller of that key; a cancelled caller
/// leaves alone, the operation is cancelled only with its last caller; a value that may not be shared is fetched
/// again by each other caller.
@Suite struct CoalescerTests {
    /// A gate operations wait at until the test opens it; counts the operations and whether each saw cancellation.
    final class Gate: Sendable {
        private struct State {
            var isOpen = false
            var waiting: [CheckedContinuation<Void, Never>] = []
            var started = 0
            var sawCancellation: [Bool] = []
        }
        private let state = Mutex(State())

        var started: Int { state.withLock { $0.started } }
        var sawCancellation: [Bool] { state.withLock { $0.sawCancellation } }

        /// The operation the callers coalesce on: counts itself, waits for the gate, returns its ordinal.
        func operation() async -> Result<Int, DownloadError> {
            let ordinal = state.withLock { state -> Int in
                state.started += 1
                return state.started
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let passes = state.withLock { state -> Bool in
                    if state.isOpen { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if passes { continuation.resume() }
            }
            let cancelled = Task.isCancelled
            state.withLock { $0.sawCancellation.append(cancelled) }
            return .success(ordinal)
        }

        func open() {
            let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.isOpen = true
                defer { state.waiting = [] }
                return state.waiting
            }
            waiting.forEach { $0.resume() }
        }
    }

    /// Polls (every millisecond, at most 10 s) until `condition` holds.
    func wait(until condition: () -> Bool) async throws {
        for _ in 0..<10_000 where !condition() { try await Task.sleep(for: .milliseconds(1)) }
        #expect(condition())
    }

    @Test func concurrentCallersOfOneKeyShareOneOperation() async throws {
        let coalescer = Coalescer<Int>()
        let gate = Gate()
        let callers = (0..<5).map { _ in Task { await coalescer.run(key: "k", operation: gate.operation) } }
        try await wait { coalescer.waiterCount == 5 }
        #expect(coalescer.inFlightCount == 1)
        gate.open()
        for caller in callers {
            #expect(try await caller.value.get() == 1)
        }
        #expect(gate.started == 1)
        #expect(coalescer.inFlightCount == 0 && coalescer.waiterCount == 0)
    }

    @Test func differentKeysRunSeparately() async throws {
        let coalescer = Coalescer<Int>()
        let gate = Gate()
        let first = Task { await coalescer.run(key: "a", operation: gate.operation) }
        let second = Task { await coalescer.run(key: "b", operation: gate.operation) }
        try await wait { coalescer.waiterCount == 2 }
        #expect(coalescer.inFlightCount == 2)
        gate.open()
        let values = [try await first.value.get(), try await second.value.get()]
        #expect(values.sorted() == [1, 2])
    }

    @Test func aCancelledCallerLeavesTheOperationToTheOthers() async throws {
        let coalescer = Coalescer<Int>()
        let gate = Gate()
        let leaving = Task { await coalescer.run(key: "k", operation: gate.operation) }
        let staying = Task { await coalescer.run(key: "k", operation: gate.operation) }
        try await wait { coalescer.waiterCount == 2 }
        leaving.cancel()
        guard case .failure(let error) = await leaving.value else {
            Issue.record("a cancelled caller gets .cancelled")
            return
        }
        #expect(error.code == .cancelled)
        #expect(coalescer.waiterCount == 1)
        gate.open()
        #expect(try await staying.value.get() == 1)
        #expect(gate.started == 1 && gate.sawCancellation == [false])
    }

    @Test func theLastCallerLeavingCancelsTheOperation() async throws {
        let coalescer = Coalescer<Int>()
        let gate = Gate()
        let only = Task { await coalescer.run(key: "k", operation: gate.operation) }
        try await wait { coalescer.waiterCount == 1 }
        only.cancel()
        guard case .failure(let error) = await only.value else {
            Issue.record("a cancelled caller gets .cancelled")
            return
        }
        #expect(error.code == .cancelled)
        #expect(coalescer.inFlightCount == 0)
        gate.open()
        try await wait { gate.sawCancellation.count == 1 }
        #expect(gate.sawCancellation == [true])
    }

    @Test func aValueThatMayNotBeSharedIsFetchedAgainByEachOtherCaller() async throws {
        let coalescer = Coalescer<Int>()
        let gate = Gate()
        let callers = (0..<3).map { _ in
            Task { await coalescer.run(key: "k", operation: gate.operation, mayShare: { _ in false }) }
        }
        try await wait { coalescer.waiterCount == 3 }
        gate.open()
        var values: [Int] = []
        for caller in callers { values.append(try await caller.value.get()) }
        // The caller that started the operation gets 1; the two others each ran their own (2 and 3).
        #expect(values.sorted() == [1, 2, 3])
        #expect(gate.started == 3)
    }
}
