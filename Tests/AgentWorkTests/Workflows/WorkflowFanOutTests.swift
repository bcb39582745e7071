import AgentLoop
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Testing

/// A big fan-out is begun in slices: one advance of a run begins at most
/// ``WorkflowEngine/beginsPerTurn`` steps, the next slice once those are committed, so that a
/// turn of the loop never holds all the branches' work (10,000 branches held it ~20 s). Driven
/// with a store whose commits land only when the test lets them, so each slice is seen.
@Suite(.ownThreads) struct WorkflowFanOutTests {
    @Test func aParallelStepOfAThousandBranchesBeginsInSlicesAndFinishes() throws {
        let loop = EventLoop()
        try loop.isolated {
            let branches = (0..<1_000).map { #"[{"id": "b\#($0)", "set": {"vars": {"x": \#($0)}}}]"# }.joined(separator: ", ")
            let harness = try WorkflowWaitGapTests.Harness(on: loop, #"{"steps": [{"id": "fan", "parallel": {"branches": [\#(branches)]}}]}"#)
            let run = harness.engine.start(try #require(harness.engine.definitions["waiter"]), input: [:], requestedBy: "test")
            var begun = 0
            var slices = 0
            var largest = 0
            for _ in 0..<2_000 {
                if harness.engine.known(run.id)?.run.status.isFinished == true { break }
                harness.store.release()
                harness.turn()
                let now = Set(harness.engine.known(run.id)?.steps.map(\.stepID) ?? []).count
                if now > begun { slices += 1 }
                largest = max(largest, now - begun)
                begun = now
            }
            #expect(harness.engine.known(run.id)?.run.status == .succeeded)
            #expect(begun == 1_001, "\(begun) steps begun")
            #expect(largest <= WorkflowEngine.beginsPerTurn, "\(largest) steps begun in one advance")
            #expect(slices >= 1_001 / WorkflowEngine.beginsPerTurn, "\(slices) slices")
            let output = harness.engine.known(run.id)?.steps.first { $0.stepID == "fan" }?.output
            #expect(output?.arrayValue?.count == 1_000)
        }
    }
}
