@testable import AgentLoop
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Testing

/// Finished workflow runs with a large input or step output are kept in memory only as the
/// newest few (each let go once the store has confirmed it written).
@Suite(.ownThreads) struct WorkflowRecentLargeTests {
    let loop = EventLoop()

    @Test func onlyTheNewestLargeFinishedRunsTheStoreHasWrittenAreLetGo() throws {
        let large: JSONValue = ["items": .array((0..<12_000).map { .number(JSONNumber($0 % 10)) })]
        try loop.isolated {
            let harness = try WorkflowWaitGapTests.Harness(on: loop, #"{"steps": [{"id": "only", "set": {"vars": {"done": true}}}]}"#)
            let definition = try #require(harness.engine.definitions["waiter"])
            @LoopActor func finished() -> String {
                let run = harness.engine.start(definition, input: large, requestedBy: "cli")
                for _ in 0..<20 where harness.engine.known(run.id)?.run.status.isFinished != true {
                    harness.store.release()
                    harness.turn()
                }
                return run.id
            }
            var ids = (0..<(WorkflowEngine.recentLargeLimit + 2)).map { _ in finished() }
            while harness.store.release() > 0 { harness.turn() }
            // Each written now: the next large run lets the oldest go, down to the limit.
            ids.append(finished())
            let kept = ids.filter { harness.engine.known($0) != nil }
            #expect(kept == Array(ids.suffix(WorkflowEngine.recentLargeLimit)), "kept \(kept.count) of \(ids.count)")
            #expect(harness.engine.known(ids[0]) == nil)
            #expect(harness.engine.known(ids.last!)?.run.status == .succeeded)

            // A small one is kept as before.
            let small = harness.engine.start(definition, input: ["n": 1], requestedBy: "cli")
            while harness.store.release() > 0 { harness.turn() }
            #expect(harness.engine.known(small.id)?.run.status == .succeeded)
        }
    }
}
