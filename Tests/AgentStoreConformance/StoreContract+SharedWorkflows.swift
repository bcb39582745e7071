import AgentWork
import Foundation
import JSONSchema
import Testing

/// A workflow store a fleet shares (``SharedWorkflowStore``: PostgreSQL's; one agent's SQLite
/// store holds its own runs, no claims): each run held by one agent under a lease with a
/// fencing token, taken over once the lease lapsed, a stale holder's commits refused.
extension StoreContract {
    /// Held workflow runs.
    package static let sharedWorkflows: [StoreCheck] = [
        StoreCheck("aWorkflowRunWhoseLeaseLapsedIsTakenOverWithItsStepLogAndTheStaleHoldersCommitsAreRefused", aWorkflowRunWhoseLeaseLapsedIsTakenOverWithItsStepLogAndTheStaleHoldersCommitsAreRefused),
        StoreCheck("anAgentStartedAgainTakesItsOwnEarlierRunsAtOnceButNotAnotherAgentsHeldOnes", anAgentStartedAgainTakesItsOwnEarlierRunsAtOnceButNotAnotherAgentsHeldOnes),
        StoreCheck("agentsTakingLapsedRunsAtOnceTakeEachRunOnce", agentsTakingLapsedRunsAtOnceTakeEachRunOnce),
    ]

    static func shared(_ stores: StoresUnderTest) throws -> any SharedWorkflowStore {
        try #require(stores.workflows as? any SharedWorkflowStore)
    }

    static func aWorkflowRunWhoseLeaseLapsedIsTakenOverWithItsStepLogAndTheStaleHoldersCommitsAreRefused(_ stores: StoresUnderTest) async throws {
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
    }

    static func anAgentStartedAgainTakesItsOwnEarlierRunsAtOnceButNotAnotherAgentsHeldOnes(_ stores: StoresUnderTest) async throws {
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
    }

    static func agentsTakingLapsedRunsAtOnceTakeEachRunOnce(_ stores: StoresUnderTest) async throws {
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
    }
}
