import AgentWork
import Foundation
import Testing

/// The retention (`store.retention`: `max_age`, `max_runs`) on every store: finished workflow
/// runs go with their step logs, schedule history lines go, as finished task runs do
/// (`StoreContract.runs`); the whole pass as the agent applies it (``RunRetention``).
extension StoreContract {
    package static let retention: [StoreCheck] = [
        StoreCheck("workflowRetentionDeletesOldAndSurplusFinishedRunsWithTheirStepLogsButNeverUnfinishedOnes",
                   workflowRetentionDeletesOldAndSurplusFinishedRunsWithTheirStepLogsButNeverUnfinishedOnes),
        StoreCheck("scheduleHistoryRetentionDeletesOldAndSurplusLinesOfEverySchedule", scheduleHistoryRetentionDeletesOldAndSurplusLinesOfEverySchedule),
        StoreCheck("oneRetentionPassPrunesTaskRunsWorkflowRunsAndScheduleHistoryAlike", oneRetentionPassPrunesTaskRunsWorkflowRunsAndScheduleHistoryAlike),
    ]

    /// Finished workflow runs ended at `ends` (one step each), and one unfinished run, `going`.
    static func workflowRuns(ending ends: [(id: String, at: Double)]) -> WorkflowCommit {
        var runs: [WorkflowRun] = ends.map { id, ended in
            var run = workflowRun(id, status: .succeeded)
            run.endedAt = ended
            return run
        }
        runs.append(workflowRun("going"))
        return WorkflowCommit(runs: runs, steps: runs.map { step($0.id, "a", $0.status.isFinished ? .succeeded : .running) })
    }

    static func workflowRetentionDeletesOldAndSurplusFinishedRunsWithTheirStepLogsButNeverUnfinishedOnes(_ stores: StoresUnderTest) async throws {
        let workflows = stores.workflows
        let t0 = Date().timeIntervalSince1970
        #expect(try await workflows.prune(endedBefore: t0, keeping: 0) == 0, "an empty store")
        #expect(await commit(workflows, workflowRuns(ending: [("old", t0 - 3_600), ("done1", t0), ("done2", t0), ("done3", t0)])) == .written)
        #expect(try await workflows.prune(endedBefore: nil, keeping: nil) == 0, "no limit: nothing goes")
        #expect(try await workflows.prune(endedBefore: t0 - 1_800, keeping: nil) == 1)
        #expect(try await workflows.prune(endedBefore: nil, keeping: 2) == 1)
        #expect(try await workflows.list(WorkflowRunFilter()).map(\.run.id) == ["going", "done3", "done2"])
        #expect(try await workflows.run(id: "going")?.steps.count == 1, "an unfinished run keeps its step log")
        #expect(try await workflows.run(id: "done3")?.steps.count == 1)
        // A run written again with a pruned run's id starts with no step log: none was left behind.
        #expect(await commit(workflows, WorkflowCommit(runs: [workflowRun("done1")])) == .written)
        #expect(try await workflows.run(id: "done1")?.steps.isEmpty == true, "the step logs went with their runs")
        #expect(try await workflows.prune(endedBefore: nil, keeping: 0) == 2)
        #expect(try await workflows.list(WorkflowRunFilter()).map(\.run.id) == ["done1", "going"])
    }

    static func scheduleHistoryRetentionDeletesOldAndSurplusLinesOfEverySchedule(_ stores: StoresUnderTest) async throws {
        let schedules = stores.schedules
        let t0 = Date().timeIntervalSince1970
        #expect(try await schedules.pruneHistory(before: t0, keeping: 0) == 0, "an empty store")
        #expect(await commit(schedules, fire("tick", run: "old", planned: t0 - 3_600)))
        for index in 1...3 { #expect(await commit(schedules, fire(index == 2 ? "tock" : "tick", run: "new\(index)", planned: t0 + Double(index)))) }
        #expect(try await schedules.pruneHistory(before: nil, keeping: nil) == 0, "no limit: nothing goes")
        #expect(try await schedules.pruneHistory(before: t0 - 1_800, keeping: nil) == 1)
        #expect(try await schedules.pruneHistory(before: nil, keeping: 2) == 1, "the newest lines of all schedules together")
        #expect(try await schedules.history(schedule: "tick", limit: 10).map(\.runID) == ["new3"])
        #expect(try await schedules.history(schedule: "tock", limit: 10).map(\.runID) == ["new2"])
        #expect(try await schedules.loadStates()["tick"]?.lastRun == "new3", "states are not history: they stay")
    }

    static func oneRetentionPassPrunesTaskRunsWorkflowRunsAndScheduleHistoryAlike(_ stores: StoresUnderTest) async throws {
        let t0 = Date().timeIntervalSince1970
        stores.runs.record(run("old", status: .succeeded, endedAt: t0 - 3_600))
        for index in 0..<3 { stores.runs.record(run("new\(index)", status: .succeeded, endedAt: t0)) }
        stores.runs.record(run("waiting"))
        await stores.runs.flush()
        #expect(await commit(stores.workflows, workflowRuns(ending: [("old", t0 - 3_600), ("done1", t0), ("done2", t0), ("done3", t0)])) == .written)
        #expect(await commit(stores.schedules, fire("tick", run: "fired-old", planned: t0 - 3_600)))
        for index in 1...3 { #expect(await commit(stores.schedules, fire("tick", run: "fired\(index)", planned: t0 + Double(index)))) }
        let retention = RunRetention(maximumAge: 1_800, maximumRuns: 2)
        #expect(try await retention.apply(runs: stores.runs, workflows: stores.workflows, schedules: stores.schedules, now: t0) == 2)
        #expect(Set(try await stores.runs.list(RunFilter(status: .succeeded)).map(\.run.id)) == ["new1", "new2"])
        #expect(try await stores.runs.run(id: "waiting") != nil, "an unfinished run stays")
        #expect(try await stores.workflows.list(WorkflowRunFilter()).map(\.run.id) == ["going", "done3", "done2"])
        #expect(try await stores.schedules.history(schedule: "tick", limit: 10).map(\.runID) == ["fired3", "fired2"])
        #expect(try await retention.apply(runs: stores.runs, workflows: stores.workflows, schedules: stores.schedules, now: t0) == 0,
                "a second pass finds nothing more")
    }
}
