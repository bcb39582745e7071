import AgentWork
import Foundation
import JSONSchema
import Testing

/// Workflow runs and their step logs, on every store (the held runs of a store a fleet shares:
/// StoreContract+SharedWorkflows).
extension StoreContract {
    /// Workflow runs and their step logs.
    package static let workflows: [StoreCheck] = [
        StoreCheck("workflowRunsAndTheirStepLogsAreReadBackAsCommittedInTheOrderTheStepsStarted", workflowRunsAndTheirStepLogsAreReadBackAsCommittedInTheOrderTheStepsStarted),
        StoreCheck("aFireWritesTheWorkflowRunItStartsWithItAndAFireUnderALapsedLeadershipWritesNone", aFireWritesTheWorkflowRunItStartsWithItAndAFireUnderALapsedLeadershipWritesNone),
        StoreCheck("aStepCommittedAgainIsReplacedAndAnotherGenerationIsARecordOfItsOwn", aStepCommittedAgainIsReplacedAndAnotherGenerationIsARecordOfItsOwn),
    ]

    package static let twoSteps = WorkflowSettings.parse(name: "flow", source: ["steps": [["id": "a", "set": ["vars": ["x": 1]]], ["id": "b", "set": ["vars": ["y": 2]]]]])!

    package static func workflowRun(_ id: String, status: WorkflowRun.Status = .running, workflow: WorkflowDefinition = twoSteps,
                                    claim: RunClaim? = nil) -> WorkflowRun {
        var run = WorkflowRun(id: id, workflow: workflow, input: ["n": .string(id)], requestedBy: "cli")
        run.status = status
        if status.isFinished { run.endedAt = run.startedAt + 1 }
        run.claim = claim
        return run
    }

    package static func step(_ run: String, _ step: String, _ status: WorkflowStepRecord.Status, output: JSONValue? = nil) -> WorkflowStepRecord {
        var record = WorkflowStepRecord(runID: run, stepID: step, kind: "task", generation: 1, attempt: 1, status: status)
        record.taskRun = "task-\(run)-\(step)"
        if status.isFinished {
            record.endedAt = record.startedAt + 0.5
            record.output = output
        }
        return record
    }

    package static func commit(_ store: any WorkflowStore, _ change: WorkflowCommit) async -> WorkflowCommitOutcome {
        await withCheckedContinuation { continuation in store.commit(change) { continuation.resume(returning: $0) } }
    }

    package static func workflowRunsAndTheirStepLogsAreReadBackAsCommittedInTheOrderTheStepsStarted(_ stores: StoresUnderTest) async throws {
        let workflows = stores.workflows
        #expect(await Self.commit(workflows, WorkflowCommit(runs: [Self.workflowRun("w1")], steps: [Self.step("w1", "a", .running)])) == .written)
        // A step's result replaces its start; the next step starts after it.
        #expect(await Self.commit(workflows, WorkflowCommit(steps: [Self.step("w1", "a", .succeeded, output: ["v": 1]), Self.step("w1", "b", .running)])) == .written)
        #expect(await Self.commit(workflows, WorkflowCommit(runs: [Self.workflowRun("w2", status: .succeeded)])) == .written)
        var other = Self.workflowRun("w3")
        other.workflow = "other"
        #expect(await Self.commit(workflows, WorkflowCommit(runs: [other])) == .written)

        let found = try #require(try await workflows.run(id: "w1"))
        #expect(found.run.input == ["n": "w1"])
        #expect(found.run.definition == Self.twoSteps.source)
        #expect(found.steps.map(\.stepID) == ["a", "b"])
        #expect(found.steps.map(\.status) == [.succeeded, .running])
        #expect(found.steps.first?.output == ["v": 1])
        #expect(found.steps.first?.taskRun == "task-w1-a")
        #expect(try await workflows.run(id: "nope") == nil)
        let unfinished = try await workflows.loadUnfinished()
        #expect(unfinished.map(\.run.id) == ["w1", "w3"], "unfinished, oldest first")
        #expect(unfinished.first?.steps.count == 2)
        #expect(try await workflows.list(WorkflowRunFilter()).map(\.run.id) == ["w3", "w2", "w1"], "newest first")
        #expect(try await workflows.list(WorkflowRunFilter(workflow: "flow")).map(\.run.id) == ["w2", "w1"])
        #expect(try await workflows.list(WorkflowRunFilter(status: .succeeded)).map(\.run.id) == ["w2"])
        #expect(try await workflows.list(WorkflowRunFilter(limit: 1)).map(\.run.id) == ["w3"])
    }

    static func aFireWritesTheWorkflowRunItStartsWithItAndAFireUnderALapsedLeadershipWritesNone(_ stores: StoresUnderTest) async throws {
        let t0 = Self.today
        let a = try #require(try await stores.schedules.lead(holder: "a", lease: Self.held))
        var fire = Self.fire("nightly", run: "unused", planned: t0 + 1_000, leader: a)
        fire.runs = []
        fire.workflowRuns = [Self.workflowRun("by-fire", claim: RunClaim(runID: "by-fire", holder: "a", fence: a.fence, leaseUntil: 0))]
        #expect(await Self.commit(stores.schedules, fire))
        let written = try #require(try await stores.workflows.run(id: "by-fire"))
        #expect(written.run.workflow == "flow")
        #expect(try await stores.workflows.loadUnfinished().map(\.run.id) == ["by-fire"])
        // a's last renewal is short, then it falls silent: the lease lapses and b leads.
        #expect(try await stores.schedules.lead(holder: "a", lease: 0.2)?.fence == a.fence)
        try await Task.sleep(for: .seconds(0.5))
        _ = try #require(try await stores.schedules.lead(holder: "b", lease: Self.held))
        var late = Self.fire("nightly", run: "unused", planned: t0 + 2_000, leader: a)
        late.runs = []
        late.workflowRuns = [Self.workflowRun("late-fire")]
        #expect(await Self.commit(stores.schedules, late) == false)
        #expect(try await stores.workflows.run(id: "late-fire") == nil, "the old leader's fire starts no workflow run")
    }

    static func aStepCommittedAgainIsReplacedAndAnotherGenerationIsARecordOfItsOwn(_ stores: StoresUnderTest) async throws {
        let workflows = stores.workflows
        #expect(await Self.commit(workflows, WorkflowCommit(runs: [Self.workflowRun("w")], steps: [Self.step("w", "a", .running)])) == .written)
        #expect(await Self.commit(workflows, WorkflowCommit(steps: [Self.step("w", "a", .failed, output: ["n": 1])])) == .written)
        var retry = Self.step("w", "a", .running)
        retry.attempt = 2
        #expect(await Self.commit(workflows, WorkflowCommit(steps: [retry])) == .written)
        var loop = Self.step("w", "a", .running)
        loop.generation = 2
        #expect(await Self.commit(workflows, WorkflowCommit(steps: [loop])) == .written)
        let found = try #require(try await workflows.run(id: "w"))
        #expect(found.steps.map(\.generation) == [1, 2], "one record per step and generation: a retry replaces it, a loop adds one")
        #expect(found.steps.map(\.attempt) == [2, 1])
        #expect(found.steps.map(\.status) == [.running, .running])
        var ended = Self.workflowRun("w", status: .failed)
        ended.error = "step a failed"
        #expect(await Self.commit(workflows, WorkflowCommit(runs: [ended])) == .written)
        let again = try #require(try await workflows.run(id: "w"))
        #expect(again.run.status == .failed, "a run committed again is replaced")
        #expect(again.run.error == "step a failed")
        #expect(again.steps.count == 2, "with its step log")
        #expect(try await workflows.list(WorkflowRunFilter()).map(\.run.id) == ["w"])
        #expect(try await workflows.list(WorkflowRunFilter(limit: 0)).isEmpty)
        #expect(try await workflows.loadUnfinished().isEmpty)
        #expect(await Self.commit(workflows, WorkflowCommit()) == .written, "an empty change is written")
    }
}
