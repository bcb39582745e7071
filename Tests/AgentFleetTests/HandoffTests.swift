#if Fleet
@testable import AgentFleet
import AgentTestSupport
import Foundation
import Testing

/// The hand-over the fleet's writers share (``Handoff`` and ``HandoffReceiver``): in order,
/// counted until done, refused once stopped, and what was handed over before a stop is taken
/// before the receiver is told the hand-over ended.
@Suite(.ownThreads) struct HandoffTests {
    /// A receiver that records what it takes and writes nothing but "done".
    actor Recorder: HandoffReceiver {
        nonisolated let handoff = Handoff<Int>(counting: true)
        private(set) var taken: [Int] = []
        private(set) var takenWhenEnded: Int?
        private(set) var writerCancelled = false
        private var ended: CheckedContinuation<Void, Never>?
        private var hasEnded = false

        func take(_ item: Int) { taken.append(item) }

        func handoffEnded() {
            takenWhenEnded = taken.count
            hasEnded = true
            ended?.resume()
            ended = nil
        }

        func writeLoop() async {
            // Cancellation ends the sleep.
            try? await Task.sleep(for: .seconds(3_600))
            writerCancelled = Task.isCancelled
        }

        func markDone(_ count: Int) { handoff.done(count) }

        func waitForEnd() async {
            if hasEnded { return }
            await withCheckedContinuation { ended = $0 }
        }
    }

    @Test func takesInOrderCountsUntilDoneAndRefusesOnceStopped() async throws {
        let recorder = Recorder()
        for item in 0..<1_000 { #expect(recorder.handoff.yield(item)) }
        #expect(recorder.backlog == 1_000, "counted from the hand-over, before the actor takes anything")
        recorder.start()
        await recorder.markDone(400)
        #expect(recorder.backlog == 600)
        recorder.stop()
        #expect(!recorder.handoff.yield(1_000), "refused once stopped")
        #expect(recorder.backlog == 600, "a refused item is not counted")
        await recorder.waitForEnd()
        #expect(await recorder.taken == Array(0..<1_000), "everything handed over before the stop, in order")
        #expect(await recorder.takenWhenEnded == 1_000, "told of the end only after taking everything")
        let deadline = Date().addingTimeInterval(30)
        while !(await recorder.writerCancelled), Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(await recorder.writerCancelled, "the writer is cancelled once the hand-over ended")
    }

    @Test func anUncountedHandoffHasNoBacklog() {
        let handoff = Handoff<String>()
        handoff.yield("a")
        handoff.done()
        #expect(handoff.backlog == 0)
    }
}
#endif
