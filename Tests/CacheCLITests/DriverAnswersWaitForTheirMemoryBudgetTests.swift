import Foundation
import Synchronization
import Testing
@testable import CacheCLI

/// The driver encodes an answer line only once the bytes it may take fit in the session's answer memory budget
/// (``DriverSessionOptions/answerMemoryBudget``): grants come in arrival order, a request larger than the whole
/// budget is granted when nothing else holds any, and released bytes grant the next waiters.
@Suite struct DriverAnswersWaitForTheirMemoryBudgetTests {
    /// Whether `grant` is made within `milliseconds` (polled every millisecond).
    static func isGranted(_ grant: DriverByteBudget.Grant, within milliseconds: Int = 200) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        while !grant.isGranted, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
        if grant.isGranted { await grant.ready() }  // returns at once once granted
        return grant.isGranted
    }

    @Test func grantsComeInOrderAndReleasedBytesGrantTheNextOnes() async {
        let budget = DriverByteBudget(limit: 100)
        let first = budget.acquire(60)
        #expect(await Self.isGranted(first))
        let second = budget.acquire(60)
        let small = budget.acquire(10)  // would fit, but waits behind `second`: no overtaking
        #expect(!(await Self.isGranted(second, within: 50)))
        budget.release(first)
        #expect(await Self.isGranted(second, within: 5_000))
        #expect(await Self.isGranted(small, within: 5_000))
        budget.release(second)
        budget.release(small)
    }

    @Test func aRequestOverTheWholeBudgetWaitsForAnEmptyOne() async {
        let budget = DriverByteBudget(limit: 100)
        let held = budget.acquire(1)
        let huge = budget.acquire(10_000)
        #expect(huge.bytes == 100)
        #expect(!(await Self.isGranted(huge, within: 50)))
        budget.release(held)
        #expect(await Self.isGranted(huge, within: 5_000))
        budget.release(huge)
        let after = budget.acquire(100)
        #expect(await Self.isGranted(after))
    }

    @Test func anInlineAnswerCostsEightTimesItsBody() {
        let answer = DriverResponse.response(id: .number("1"), status: 200, statusText: "OK", headers: [],
                                             body: .bytes(Data(count: 1_000)), interim: [])
        #expect(answer.encodingCost == 8 * 1_000 + 4_096)
        #expect(DriverResponse.error(id: nil, message: "x").encodingCost == 4_096)
    }
}
