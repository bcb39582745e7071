@testable import AgentStore
import AgentTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// ``AgentStore/whenWritten(_:)``, on which every read of a chat history through the agent
/// waits (a chat's answer comes before its lines are committed): what was queued before it is
/// readable when it runs; with nothing queued and the writer idle it runs at once, on the
/// caller's thread, without a hand-off to the writer.
@Suite(.ownThreads, .serialized) struct WhenWrittenTests {
    @Test func aReadAfterItSeesTheLinesQueuedBeforeAndAnIdleStoreAnswersAtOnce() throws {
        let folder = TestPaths.temporaryDirectory("when-written")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: StoreSettings(), logger: Logger(label: "test"))
        defer { store.close() }
        let path = store.path
        for round in 1...20 {
            store.recordChat(conversation: "ops", user: "ann", role: "user", source: "", text: "question \(round)")
            store.recordChat(conversation: "ops", user: "ann", role: "bot", source: "llm", text: "answer \(round)")
            let seen = Mutex<[String]?>(nil)
            let done = DispatchSemaphore(value: 0)
            store.whenWritten {
                let lines = (try? StoreReader(path: path).chat(conversation: "ops", limit: 2).map(\.text)) ?? []
                seen.withLock { $0 = lines }
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 120) == .success)
            #expect(Set(seen.withLock { $0 } ?? []) == ["question \(round)", "answer \(round)"], "round \(round)")
        }

        // Settled: the writer has nothing left, and `done` runs before whenWritten returns.
        #expect(WorkflowAgent.wait(timeout: 60) { store.isSettled })
        let thread = Mutex<Bool?>(nil)
        let caller = pthread_self()
        store.whenWritten { thread.withLock { $0 = pthread_equal(pthread_self(), caller) != 0 } }
        #expect(thread.withLock { $0 } == true, "an idle store handed the wait to its writer")
    }
}
