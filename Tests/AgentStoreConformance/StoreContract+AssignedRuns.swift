import AgentWork
import Foundation
import JSONSchema
import Testing

/// Assignments in the shared queue, on every store: a run held for the agent its task's
/// strategy chose is claimed by that agent at once and by another only after its hold; the
/// hold's end is known to the others (no poll wait); a retry is held for no one.
extension StoreContract {
    /// Runs assigned to an agent, and runs requiring labels.
    package static let assignedRuns: [StoreCheck] = [
        StoreCheck("aRunAssignedToAnAgentIsClaimedByItAtOnceAndByAnotherOnlyAfterItsHold", aRunAssignedToAnAgentIsClaimedByItAtOnceAndByAnotherOnlyAfterItsHold),
        StoreCheck("theEndOfAHoldForAnotherAgentIsKnownSoThatItsRunNeedNotWaitForThePoll", theEndOfAHoldForAnotherAgentIsKnownSoThatItsRunNeedNotWaitForThePoll),
        StoreCheck("aRetryOfAnAssignedRunIsHeldForNoAgent", aRetryOfAnAssignedRunIsHeldForNoAgent),
        StoreCheck("aRunRequiringLabelsIsClaimedOnlyByAHolderWithAnExecutorCarryingThemAll", aRunRequiringLabelsIsClaimedOnlyByAHolderWithAnExecutorCarryingThemAll),
    ]

    static func assigned(_ id: String, to agent: String, hold: Double, queuedAt: Double = Date().timeIntervalSince1970) -> TaskRun {
        var run = Self.run(id, queuedAt: queuedAt)
        run.assignedAgent = agent
        run.assignmentHold = hold
        return run
    }

    static func aRunAssignedToAnAgentIsClaimedByItAtOnceAndByAnotherOnlyAfterItsHold(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        let now = Date().timeIntervalSince1970
        // Holds far longer than any pause of the test, or over before it starts.
        runs.record(Self.assigned("for-a", to: "a", hold: Self.held, queuedAt: now - 3))
        runs.record(Self.assigned("for-b", to: "b", hold: Self.held, queuedAt: now - 2))
        runs.record(Self.assigned("hold-over", to: "b", hold: 5, queuedAt: now - 10))
        runs.record(Self.run("anyone", queuedAt: now - 1))
        await runs.flush()
        let byC = try await runs.claim(ClaimRequest(holder: "c", room: ["t": 5], lease: Self.held))
        #expect(byC.map(\.id) == ["hold-over", "anyone"], "runs held for another agent are left to it until the hold ends")
        let byA = try await runs.claim(ClaimRequest(holder: "a", room: ["t": 5], lease: Self.held))
        #expect(byA.map(\.id) == ["for-a"], "the chosen agent claims its run at once (and not another agent's)")
        let stored = try #require(try await runs.run(id: "for-a"))
        #expect(stored.assignedAgent == "a")
        #expect(stored.assignmentHold == Self.held)
        #expect(stored.agent == "a", "the record says which agent carries the run out")
        #expect(try await runs.run(id: "hold-over")?.agent == "c")
        #expect(try await runs.claim(ClaimRequest(holder: "b", room: ["t": 5], lease: Self.held)).map(\.id) == ["for-b"])
    }

    static func theEndOfAHoldForAnotherAgentIsKnownSoThatItsRunNeedNotWaitForThePoll(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        runs.record(Self.assigned("for-a", to: "a", hold: Self.held))
        await runs.flush()
        let left = try #require(try await runs.nextLapse(tasks: ["t"], holder: "b"), "b learns when a's hold ends")
        #expect(left > 0 && left <= Self.held, "seconds until the hold ends: \(left)")
        #expect(try await runs.nextLapse(tasks: ["t"], holder: "a") == nil, "a's own hold is nothing to wait for")
        #expect(try await runs.nextLapse(tasks: ["u"], holder: "b") == nil, "only the tasks asked about")
    }

    static func aRetryOfAnAssignedRunIsHeldForNoAgent(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        runs.record(Self.assigned("flaky", to: "a", hold: Self.held))
        await runs.flush()
        var run = try #require(try await runs.claim(ClaimRequest(holder: "a", room: ["t": 1], lease: Self.held)).first)
        run.status = .retrying
        run.error = "exit 1"
        run.nextAttemptAt = Date().timeIntervalSince1970 - 0.1
        runs.record(run)
        await runs.flush()
        #expect(runs.refusedWrites == 0)
        #expect(try await runs.nextLapse(tasks: ["t"], holder: "b") == nil, "no hold left to wait for")
        let retried = try await runs.claim(ClaimRequest(holder: "b", room: ["t": 1], lease: Self.held))
        #expect(retried.map(\.id) == ["flaky"], "the retry goes to any agent with room")
        #expect(retried.first?.attempt == 2)
        #expect(retried.first?.agent == "b")
    }

    static func aRunRequiringLabelsIsClaimedOnlyByAHolderWithAnExecutorCarryingThemAll(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        var gpu = Self.run("gpu")
        gpu.require = ["gpu": "yes"]
        runs.record(gpu)
        runs.record(Self.run("plain"))
        await runs.flush()
        // No executor (the task's own worker): runs requiring nothing only.
        #expect(try await runs.claim(ClaimRequest(holder: "cpu-only", room: ["t": 5], lease: Self.held)).map(\.id) == ["plain"])
        // Executors whose labels do not carry gpu=yes.
        let others: [[String: String]] = [["gpu": "no"], ["zone": "a"]]
        #expect(try await runs.claim(ClaimRequest(holder: "no-gpu", room: ["t": 5], lease: Self.held, labels: ["t": others])).isEmpty)
        // One executor carrying it (among others, and with more labels than required).
        let sets: [[String: String]] = [["zone": "a"], ["gpu": "yes", "zone": "b"]]
        let taken = try await runs.claim(ClaimRequest(holder: "gpu-host", room: ["t": 5], lease: Self.held, labels: ["t": sets]))
        #expect(taken.map(\.id) == ["gpu"])
        #expect(taken.first?.require == ["gpu": "yes"])
    }
}
