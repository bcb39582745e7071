import AgentStore
import AgentStoreConformance
import AgentTestSupport
import AgentWork
import Foundation
import Logging
import Testing

/// The store's retention covers workflow runs as it covers task runs: finished runs older than
/// `max_age` and beyond the newest `max_runs` go, with their step logs; unfinished ones stay.
@Suite(.ownThreads) struct WorkflowRetentionTests {
    @Test func finishedWorkflowRunsBeyondTheRetentionLimitsGoWithTheirStepLogsAndUnfinishedOnesStay() async throws {
        let folder = TestPaths.temporaryDirectory("workflow-retention")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var settings = StoreSettings()
        settings.maximumAge = 1_800
        settings.maximumRuns = 2
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: settings, logger: Logger(label: "test"))
        defer { store.close() }
        let workflows = try SQLiteWorkflowStore(store: store)
        let now = Date().timeIntervalSince1970
        var runs: [WorkflowRun] = []
        for (id, ended) in [("old", now - 3_600), ("done1", now), ("done2", now), ("done3", now)] {
            var run = StoreContract.workflowRun(id, status: .succeeded)
            run.endedAt = ended
            runs.append(run)
        }
        runs.append(StoreContract.workflowRun("going", status: .running))
        let steps = runs.map { StoreContract.step($0.id, "a", $0.status == .running ? .running : .succeeded) }
        #expect(await StoreContract.commit(workflows, WorkflowCommit(runs: runs, steps: steps)) == .written)

        // The writer applies the retention every 10 s.
        let deadline = Date().addingTimeInterval(60)
        while try await workflows.list(WorkflowRunFilter()).count > 3, Date() < deadline { try await Task.sleep(for: .milliseconds(200)) }
        #expect(try await workflows.list(WorkflowRunFilter()).map(\.run.id) == ["going", "done3", "done2"],
                "the old run and the surplus finished one went; the unfinished one stays")
        #expect(try await workflows.run(id: "going")?.steps.count == 1)
        // A run written again with a pruned run's id starts with no step log: none was left behind.
        #expect(await StoreContract.commit(workflows, WorkflowCommit(runs: [StoreContract.workflowRun("done1")])) == .written)
        #expect(try await workflows.run(id: "done1")?.steps.isEmpty == true, "their step logs went with them")
    }
}
