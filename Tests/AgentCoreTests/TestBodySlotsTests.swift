import AgentTestSupport
import Foundation
import Synchronization
import Testing

/// The order in which the test bodies get their slots (see TestBodySlots): long first, then
/// the next body of a suite that has begun, then the rest as they asked.
@Suite struct TestBodySlotsTests {
    /// The names of the bodies in the order they got a slot.
    private final class Arrivals: Sendable {
        let names = Mutex<[String]>([])
    }

    /// Waits (at most 60 s) until `condition` holds.
    private func waitUntil(_ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while !condition() {
            if ContinuousClock.now > deadline { return false }
            try await Task.sleep(for: .milliseconds(2))
        }
        return true
    }

    @Test func aFreedSlotGoesToALongBodyThenToABegunSuiteThenToTheRestInTheOrderTheyAsked() async throws {
        let slots = TestBodySlots(width: 1)
        await slots.take(suite: "A")
        let order = Arrivals()
        var tasks: [Task<Void, Never>] = []
        // Each asks once the one before waits: the order they asked is certain.
        for (name, suite, long) in [("B1", "B", false), ("C1", "C", false), ("B2", "B", false), ("A2", "A", false), ("D1", "D", true)] {
            let asked = slots.waiting
            tasks.append(Task {
                await slots.take(suite: suite, long: long)
                order.names.withLock { $0.append(name) }
            })
            #expect(try await waitUntil { slots.waiting == asked + 1 }, "\(name) never asked")
        }
        // B has not begun: B2 asked before B1 had a slot, so it waits in the last lane.
        for given in 1...5 {
            slots.give()
            #expect(try await waitUntil { order.names.withLock { $0.count } == given })
        }
        for task in tasks { await task.value }
        #expect(order.names.withLock { $0 } == ["D1", "A2", "B1", "C1", "B2"])
    }

    @Test func aSlotThatIsFreeIsTakenAtOnceWhateverTheLane() async throws {
        let slots = TestBodySlots(width: 2)
        await slots.take(suite: "A")
        await slots.take(suite: "B", long: true)
        #expect(slots.waiting == 0)
        slots.give()
        await slots.take(suite: "C")
        #expect(slots.waiting == 0)
    }
}
