#if Fleet
import AgentFleet
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Testing

/// Workflow runs and their step logs, on every store; and, on a store a fleet shares, each run
/// held by one agent under a lease with a fencing token: taken over once the lease lapsed, a
/// stale holder's commits refused.
extension StoreConformanceTests {
    static let twoSteps = WorkflowSettings.parse(name: "flow", source: ["steps": [["id": "a", "set": ["vars": ["x": 1]]], ["id": "b", "set": ["vars": ["y": 2]]]]])!

    static func workflowRun(_ id: String, status: WorkflowRun.Status = .running, workflow: WorkflowDefinition = twoSteps,
                            claim: RunClaim? = nil) -> WorkflowRun {
        var run = WorkflowRun(id: id, workflow: workflow, input: ["n": .string(id)], requestedBy: "cli")
        run.status = status
        if status.isFinished { run.endedAt = run.startedAt + 1 }
        run.claim = claim
        return run
    }

    static func step(_ run: String, _ step: String, _ status: WorkflowStepRecord.Status, output: JSONValue? = nil) -> WorkflowStepRecord {
        var record = WorkflowStepRecord(runID: run, stepID: step, kind: "task", generation: 1, attempt: 1, status: status)
        record.taskRun = "task-\(run)-\(step)"
        if status.isFinished {
            record.endedAt = record.startedAt + 0.5
            record.output = output
        }
        return record
    }

    static func commit(_ store: any WorkflowStore, _ change: WorkflowCommit) async -> WorkflowCommitOutcome {
        await withCheckedContinuation { continuation in store.commit(change) { continuation.resume(returning: $0) } }
    }

    @Test(arguments: StoreKind.allCases)
    func workflowRunsAndTheirStepLogsAreReadBackAsCommittedInTheOrderTheStepsStarted(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
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
        #expect(try await workflows.list(WorkflowRunFilter()).map(\.id) == ["w3", "w2", "w1"], "newest first")
        #expect(try await workflows.list(WorkflowRunFilter(workflow: "flow")).map(\.id) == ["w2", "w1"])
        #expect(try await workflows.list(WorkflowRunFilter(status: .succeeded)).map(\.id) == ["w2"])
        #expect(try await workflows.list(WorkflowRunFilter(limit: 1)).map(\.id) == ["w3"])
        await stores.close()
    }

    @Test(arguments: StoreKind.allCases)
    func aFireWritesTheWorkflowRunItStartsWithItAndAFireUnderALapsedLeadershipWritesNone(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
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
        await stores.close()
    }

    // MARK: Held runs (a fleet's shared store)

    /// The shared stores: PostgreSQL (one agent's SQLite store holds its own runs: no claims).
    static let sharedKinds: [StoreKind] = [.postgres]

    static func shared(_ stores: StoresUnderTest) throws -> any SharedWorkflowStore {
        try #require(stores.workflows as? any SharedWorkflowStore)
    }

    @Test(arguments: sharedKinds)
    func aWorkflowRunWhoseLeaseLapsedIsTakenOverWithItsStepLogAndTheStaleHoldersCommitsAreRefused(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
        let store = try Self.shared(stores)
        let tokenA = try await store.startToken(holder: "a")
        let claimA = RunClaim(runID: "w", holder: "a", fence: tokenA, leaseUntil: 0)
        #expect(await Self.commit(store, WorkflowCommit(runs: [Self.workflowRun("w", claim: claimA)], steps: [Self.step("w", "a", .running)], claim: claimA)) == .written)
        #expect(await Self.commit(store, WorkflowCommit(steps: [Self.step("w", "a", .succeeded, output: ["v": 1]), Self.step("w", "b", .running)], claim: claimA)) == .written)
        let tokenB = try await store.startToken(holder: "b")
        #expect(tokenB > tokenA)
        #expect(try await store.claim(holder: "b", token: tokenB, lease: Self.held, limit: 10).isEmpty, "a's lease runs: b takes nothing")
        #expect(try await store.renew([claimA], lease: Self.held) == ["w"])

        // a falls silent after a short last renewal: the lease lapses and b takes the run.
        #expect(try await store.renew([claimA], lease: 0.2) == ["w"])
        try await Task.sleep(for: .seconds(0.5))
        let taken = try await store.claim(holder: "b", token: tokenB, lease: Self.held, limit: 10)
        #expect(taken.map(\.run.id) == ["w"])
        let claimB = try #require(taken.first?.run.claim)
        #expect(claimB.holder == "b")
        #expect(claimB.fence > tokenB, "a new fencing token, higher than any before")
        #expect(taken.first?.steps.map(\.stepID) == ["a", "b"], "with its step log")
        #expect(taken.first?.steps.first?.status == .succeeded)
        #expect(try await store.claim(holder: "c", token: try await store.startToken(holder: "c"), lease: Self.held, limit: 10).isEmpty,
                "taken once: b's lease runs")

        // a's late result for step b is refused, and so is any change of the run; b's is written.
        #expect(await Self.commit(store, WorkflowCommit(steps: [Self.step("w", "b", .succeeded, output: ["by": "a"])], claim: claimA)) == .refused)
        var finishedByA = Self.workflowRun("w", status: .failed, claim: claimA)
        finishedByA.error = "late"
        #expect(await Self.commit(store, WorkflowCommit(runs: [finishedByA], claim: claimA)) == .refused)
        #expect(try await store.renew([claimA], lease: Self.held).isEmpty, "the stale holder cannot renew")
        #expect(try await store.run(id: "w")?.steps.last?.status == .running)
        #expect(await Self.commit(store, WorkflowCommit(runs: [Self.workflowRun("w", status: .succeeded, claim: claimB)],
                                                        steps: [Self.step("w", "b", .succeeded, output: ["by": "b"])], claim: claimB)) == .written)
        let done = try #require(try await store.run(id: "w"))
        #expect(done.run.status == .succeeded)
        #expect(done.steps.map(\.output) == [["v": 1], ["by": "b"]])
        #expect(try await store.loadUnfinished().isEmpty)
        await stores.close()
    }

    @Test(arguments: sharedKinds)
    func anAgentStartedAgainTakesItsOwnEarlierRunsAtOnceButNotAnotherAgentsHeldOnes(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
        let store = try Self.shared(stores)
        let oldA = try await store.startToken(holder: "a")
        let tokenB = try await store.startToken(holder: "b")
        for (id, holder, token) in [("mine", "a", oldA), ("theirs", "b", tokenB)] {
            let claim = RunClaim(runID: id, holder: holder, fence: token, leaseUntil: 0)
            #expect(await Self.commit(store, WorkflowCommit(runs: [Self.workflowRun(id, claim: claim)], claim: claim)) == .written)
        }
        let newA = try await store.startToken(holder: "a")
        let taken = try await store.claim(holder: "a", token: newA, lease: Self.held, limit: 10)
        #expect(taken.map(\.run.id) == ["mine"], "its earlier life's run, before the lease lapses; not b's")
        // What the new life starts is its own: not taken again.
        let fresh = RunClaim(runID: "new", holder: "a", fence: newA, leaseUntil: 0)
        #expect(await Self.commit(store, WorkflowCommit(runs: [Self.workflowRun("new", claim: fresh)], claim: fresh)) == .written)
        #expect(try await store.claim(holder: "a", token: newA, lease: Self.held, limit: 10).isEmpty)
        // The earlier life's claim is stale now.
        let old = RunClaim(runID: "mine", holder: "a", fence: oldA, leaseUntil: 0)
        #expect(await Self.commit(store, WorkflowCommit(steps: [Self.step("mine", "a", .running)], claim: old)) == .refused)
        await stores.close()
    }

    @Test(arguments: sharedKinds)
    func agentsTakingLapsedRunsAtOnceTakeEachRunOnce(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
        let store = try Self.shared(stores)
        let token = try await store.startToken(holder: "dead")
        var claims: [RunClaim] = []
        for index in 0..<40 {
            let claim = RunClaim(runID: "w\(index)", holder: "dead", fence: token, leaseUntil: 0)
            claims.append(claim)
            #expect(await Self.commit(store, WorkflowCommit(runs: [Self.workflowRun(claim.runID, claim: claim)], claim: claim)) == .written)
        }
        #expect(try await store.renew(claims, lease: 0.2).count == 40)
        try await Task.sleep(for: .seconds(0.5))
        let tokens = [try await store.startToken(holder: "b"), try await store.startToken(holder: "c")]
        async let b = store.claim(holder: "b", token: tokens[0], lease: Self.held, limit: 25)
        async let c = store.claim(holder: "c", token: tokens[1], lease: Self.held, limit: 25)
        let (byB, byC) = try await (b, c)
        let idsB = Set(byB.map(\.run.id)), idsC = Set(byC.map(\.run.id))
        #expect(idsB.isDisjoint(with: idsC), "no run taken twice")
        // Whoever came second may have skipped rows the first held locked: what is left is taken next.
        let rest = try await store.claim(holder: "b", token: tokens[0], lease: Self.held, limit: 100)
        #expect(idsB.union(idsC).union(rest.map(\.run.id)) == Set(claims.map(\.runID)))
        #expect(byB.count + byC.count + rest.count == 40)
        await stores.close()
    }
}
#endif
