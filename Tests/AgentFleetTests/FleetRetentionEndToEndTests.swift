#if Fleet
import AgentFleet
import AgentStoreConformance
import AgentTestSupport
@testable import AgentWork
import Foundation
import Logging
import Testing

/// The store's retention (`store.retention`) covers a fleet's shared database as it covers the
/// agent's SQLite store: a real agent of the fleet deletes the finished task runs, workflow runs
/// (with their step logs) and schedule history lines past `max_age` and beyond `max_runs`, and
/// never an unfinished run.
@Suite(.ownThreads, .serialized) struct FleetRetentionEndToEndTests {
    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aFleetAgentPrunesTheSharedRunsWorkflowRunsAndScheduleHistoryByTheStoresRetention() async throws {
        let database = try PostgresTestServer.require().makeDatabase()
        var settings = try PostgresStoreConformanceTests.fleetSettings(database: database, agent: "writer")
        // The unfinished workflow run's lease holds through the test: the agent does not take it.
        settings.lease = 3_600
        let store = try await PostgresFleetStore.connect(settings, logger: Logger(label: "test"))
        let t0 = Date().timeIntervalSince1970
        store.runs.record(StoreContract.run("old", status: .succeeded, endedAt: t0 - 3_600))
        for index in 0..<3 { store.runs.record(StoreContract.run("new\(index)", status: .succeeded, endedAt: t0)) }
        store.runs.record(StoreContract.run("waiting"))
        var workflowRuns: [WorkflowRun] = []
        for (id, ended) in [("old", t0 - 3_600), ("done1", t0), ("done2", t0), ("done3", t0)] {
            var run = StoreContract.workflowRun(id, status: .succeeded)
            run.endedAt = ended
            workflowRuns.append(run)
        }
        workflowRuns.append(StoreContract.workflowRun("going"))
        let steps = workflowRuns.map { StoreContract.step($0.id, "a", $0.status.isFinished ? .succeeded : .running) }
        #expect(await StoreContract.commit(store.workflows, WorkflowCommit(runs: workflowRuns, steps: steps)) == .written)
        let fire = StoreContract.fire("tick", run: "fired-old", planned: t0 - 3_600)
        #expect(await StoreContract.commit(store.schedules, ScheduleCommit(history: fire.history)))
        for index in 1...3 {
            #expect(await StoreContract.commit(store.schedules, ScheduleCommit(history: StoreContract.fire("tick", run: "fired\(index)", planned: t0).history)))
        }
        await store.runs.flush()
        #expect(try await store.runs.list(RunFilter(limit: 100)).count == 5)

        let agent = try AgentRun.fleetAgent("keeper", database: database, folder: "fleet-retention",
                                            settings: #""enabled_modules": [], "processes": {}, "store": {"retention": {"max_age": 1800, "max_runs": 2}}"#)
        defer { _ = agent.stop() }
        // The agent's first pass comes at its start; the next a minute later.
        let deadline = Date().addingTimeInterval(60)
        while try await store.runs.list(RunFilter(limit: 100)).count > 3, Date() < deadline { try await Task.sleep(for: .milliseconds(200)) }
        #expect(Set(try await store.runs.list(RunFilter(limit: 100)).map(\.run.id)) == ["waiting", "new1", "new2"],
                "the old run and the surplus finished one went; the unfinished one stays")
        while try await store.workflows.list(WorkflowRunFilter()).count > 3, Date() < deadline { try await Task.sleep(for: .milliseconds(200)) }
        #expect(try await store.workflows.list(WorkflowRunFilter()).map(\.run.id) == ["going", "done3", "done2"])
        #expect(try await store.workflows.run(id: "going")?.steps.count == 1)
        #expect(await StoreContract.commit(store.workflows, WorkflowCommit(runs: [StoreContract.workflowRun("done1")])) == .written)
        #expect(try await store.workflows.run(id: "done1")?.steps.isEmpty == true, "the pruned runs' step logs went with them")
        while try await store.schedules.history(schedule: "tick", limit: 10).count > 2, Date() < deadline { try await Task.sleep(for: .milliseconds(200)) }
        #expect(try await store.schedules.history(schedule: "tick", limit: 10).map(\.runID) == ["fired3", "fired2"])
        await store.shutDown()
    }
}
#endif
