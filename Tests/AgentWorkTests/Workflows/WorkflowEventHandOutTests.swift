@testable import AgentLoop
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Testing

/// An event that many runs wait for is handed out over several turns of the loop, a few
/// milliseconds each (10,000 runs held the loop 170 ms in one), and the events after it wait
/// for it: every run sees the events in the order they came.
@Suite(.ownThreads) struct WorkflowEventHandOutTests {
    static let twoWaits = """
        {"steps": [{"id": "first", "wait_event": {"type": "go", "timeout": 600}},
                   {"id": "second", "wait_event": {"type": "go", "timeout": 600}}]}
        """

    @Test func anEventManyRunsWaitForIsHandedOutOverTurnsAndTheNextEventsComeAfterIt() throws {
        let loop = EventLoop()
        try loop.isolated {
            let harness = try WorkflowWaitGapTests.Harness(on: loop, Self.twoWaits)
            let definition = try #require(harness.engine.definitions["waiter"])
            let runs = (0..<2_000).map { _ in harness.engine.start(definition, input: [:], requestedBy: "test").id }
            let waiting = { runs.filter { harness.record($0, "first")?.status == .waiting }.count }
            for _ in 0..<50 where waiting() < runs.count {
                harness.store.release()
                harness.turn()
            }
            #expect(waiting() == runs.count)
            // The runs go on to their second wait only once these commits land: held until then,
            // so that the second event must be taken by the first waits it reaches.
            harness.store.release()
            harness.turn()

            // Both events come in one turn, as a burst does.
            loop.schedule(after: 0) {
                harness.engine.eventArrived(type: "go", source: "test", time: 1, payload: ["n": 1])
                harness.engine.eventArrived(type: "go", source: "test", time: 2, payload: ["n": 2])
            }
            loop.runOnce(maxWait: 0.01)
            let afterOneTurn = runs.filter { harness.record($0, "first")?.status == .succeeded }.count
            var turns = 1
            while runs.contains(where: { harness.record($0, "first")?.status != .succeeded }), turns < 10_000 {
                loop.runOnce(maxWait: 0.01)
                turns += 1
            }
            print("WorkflowEventHandOutTests: \(afterOneTurn) of \(runs.count) runs took the event in the first turn; \(turns) turns in all")
            #expect(afterOneTurn < runs.count, "one turn handed the event to every run (\(runs.count)): nothing shows the slicing")
            let firsts = runs.compactMap { harness.record($0, "first")?.output?["payload"]?["n"] }
            #expect(firsts.count == runs.count && firsts.allSatisfy { $0 == 1 }, "a run took the second event first: \(Set(firsts.map { "\($0)" }))")
            // The second event reached no first wait: it came after the first had ended them all.
            #expect(harness.engine.arrivals.isEmpty)
        }
    }
}
