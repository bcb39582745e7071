import AgentWork
import Foundation
import JSONSchema
import Testing

/// What the engine relies on from a store, checked on every implementation (issue 26: "both
/// pass one shared conformance test suite"; issue 35: one contract, two stores, one suite):
/// runs recorded, read back, listed and pruned; claims in the queue's order, exclusive,
/// leased and fenced; schedule commits atomic and refused under a lapsed leadership; workflow
/// runs and their step logs; shared memory's versions. Each list of checks is one
/// parameterised test in each implementation's test target (AgentStoreTests: SQLite,
/// AgentFleetTests: PostgreSQL).
package enum StoreContract {
    package static func run(_ id: String, task: String = "t", status: TaskRun.Status = .queued, priority: TaskRun.Priority = .normal,
                            notBefore: Double? = nil, queuedAt: Double = Date().timeIntervalSince1970, endedAt: Double? = nil) -> TaskRun {
        var run = TaskRun(id: id, task: task, input: ["n": .string(id)], priority: priority, notBefore: notBefore, requestedBy: .http,
                          queuedAt: queuedAt)
        run.status = status
        run.attempt = status == .queued ? 0 : 1
        run.endedAt = endedAt ?? (status.isFinished ? Date().timeIntervalSince1970 : nil)
        if status == .failed {
            run.error = "exit 3"
            run.exitCode = 3
            run.stderrTail = "boom\n"
            run.output = ["partial": true]
        }
        return run
    }

    /// Seconds of a lease that must hold through the test: far longer than any pause of the
    /// test process (under a full parallel suite on 2 cores, other tests' blocking waits have
    /// held its shared threads for over a minute). A lease lapses only when a test lets it:
    /// a short last renewal, then a wait.
    package static let held = 3_600.0

    /// What every implementation passes: runs, claims, assigned runs, schedules, workflow
    /// runs and shared memory (``sharedWorkflows`` and ``assignments`` only where there is such
    /// a store).
    package static var common: [StoreCheck] { runs + attempts + claims + assignedRuns + schedules + workflows + memory + retention + listing }

    // MARK: Runs

    /// Recording, reading, listing and pruning runs.
    package static let runs: [StoreCheck] = [
        StoreCheck("everyChangeIsWrittenAndTheLastOneWins", everyChangeIsWrittenAndTheLastOneWins),
        StoreCheck("interruptionsAreKeptAndAnAbandonedRunIsFinished", interruptionsAreKeptAndAnAbandonedRunIsFinished),
        StoreCheck("unfinishedRunsComeBackOldestFirst", unfinishedRunsComeBackOldestFirst),
        StoreCheck("retentionDeletesOldAndSurplusFinishedRunsButNeverUnfinishedOnes", retentionDeletesOldAndSurplusFinishedRunsButNeverUnfinishedOnes),
        StoreCheck("aRunRecordedAgainIsReplacedInItsPlace", aRunRecordedAgainIsReplacedInItsPlace),
        StoreCheck("listsHonourTheirLimitAndBothFiltersAtOnce", listsHonourTheirLimitAndBothFiltersAtOnce),
        StoreCheck("aMissingRunIsNoneAndAClaimedChangeOfItIsRefused", aMissingRunIsNoneAndAClaimedChangeOfItIsRefused),
        StoreCheck("retentionOfNothingDeletesNothingAndKeepingNoneDeletesEveryFinishedRun", retentionOfNothingDeletesNothingAndKeepingNoneDeletesEveryFinishedRun),
        StoreCheck("newRunsCommittedTogetherAreThereOnceDoneAndAnEarlierRecordOfOneIsReplaced", newRunsCommittedTogetherAreThereOnceDoneAndAnEarlierRecordOfOneIsReplaced),
    ]

    static func everyChangeIsWrittenAndTheLastOneWins(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        runs.record(Self.run("a"))
        runs.record(Self.run("a", status: .running))
        runs.record(Self.run("a", status: .failed))
        runs.record(Self.run("b", task: "other"))
        await runs.flush()
        let a = try #require(try await runs.run(id: "a"))
        #expect(a.status == .failed)
        #expect(a.exitCode == 3)
        #expect(a.error == "exit 3")
        #expect(a.stderrTail == "boom\n")
        #expect(a.input == ["n": "a"])
        #expect(a.output == ["partial": true])
        #expect(a.endedAt != nil)
        #expect(a.requestedBy == .http)
        #expect(try await runs.loadUnfinished().map(\.id) == ["b"])
        #expect(try await runs.list(RunFilter(task: "t")).map(\.run.id) == ["a"])
        #expect(try await runs.list(RunFilter(status: .queued)).map(\.run.id) == ["b"])
        #expect(try await runs.list(RunFilter(limit: 1)).map(\.run.id) == ["b"], "newest first")
        #expect(try await runs.run(id: "nope") == nil)
    }

    static func interruptionsAreKeptAndAnAbandonedRunIsFinished(_ stores: StoresUnderTest) async throws {
        var waiting = Self.run("waiting", status: .retrying)
        waiting.attempt = 3
        waiting.interruptions = 2
        var abandoned = Self.run("abandoned", status: .abandoned)
        abandoned.attempt = 4
        abandoned.interruptions = 4
        abandoned.error = "abandoned: interrupted 4 times"
        stores.runs.record(waiting)
        stores.runs.record(abandoned)
        await stores.runs.flush()
        #expect(try await stores.runs.run(id: "waiting")?.interruptions == 2)
        let ended = try #require(try await stores.runs.run(id: "abandoned"))
        #expect(ended.status == .abandoned)
        #expect(ended.interruptions == 4)
        #expect(try await stores.runs.loadUnfinished().map(\.id) == ["waiting"])
        #expect(try await stores.runs.list(RunFilter(status: .abandoned)).map(\.run.id) == ["abandoned"])
    }

    static func unfinishedRunsComeBackOldestFirst(_ stores: StoresUnderTest) async throws {
        for (index, status) in [TaskRun.Status.queued, .succeeded, .running, .retrying, .cancelled, .queued].enumerated() {
            stores.runs.record(Self.run("r\(index)", status: status))
        }
        await stores.runs.flush()
        #expect(try await stores.runs.loadUnfinished().map(\.id) == ["r0", "r2", "r3", "r5"])
    }

    static func retentionDeletesOldAndSurplusFinishedRunsButNeverUnfinishedOnes(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        // One instant for the ends and the cutoff: what is old does not depend on how long the
        // test process pauses between two steps.
        let t0 = Date().timeIntervalSince1970
        runs.record(Self.run("old", status: .succeeded, endedAt: t0 - 3600))
        runs.record(Self.run("waiting"))
        for index in 0..<5 { runs.record(Self.run("new\(index)", status: .succeeded, endedAt: t0)) }
        await runs.flush()
        #expect(try await runs.list(RunFilter(limit: 100)).count == 7)
        #expect(try await runs.prune(endedBefore: t0 - 1800, keeping: nil) == 1)
        #expect(try await runs.prune(endedBefore: nil, keeping: 2) == 3)
        #expect(Set(try await runs.list(RunFilter(limit: 100)).map(\.run.id)) == ["waiting", "new3", "new4"])
    }

    static func aRunRecordedAgainIsReplacedInItsPlace(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        let now = Date().timeIntervalSince1970
        runs.record(Self.run("first", queuedAt: now - 2))
        runs.record(Self.run("second", queuedAt: now - 1))
        await runs.flush()
        var again = Self.run("first", status: .retrying, queuedAt: now - 2)
        again.error = "exit 1"
        runs.record(again)
        await runs.flush()
        #expect(try await runs.loadUnfinished().map(\.id) == ["first", "second"], "a change keeps the run's place in the queue")
        #expect(try await runs.list(RunFilter()).map(\.run.id) == ["second", "first"], "one record per id, newest first by arrival")
        #expect(try await runs.run(id: "first")?.status == .retrying)
        #expect(try await runs.run(id: "first")?.error == "exit 1")
    }

    static func listsHonourTheirLimitAndBothFiltersAtOnce(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        for index in 0..<3 { runs.record(Self.run("t-queued\(index)")) }
        for index in 0..<2 { runs.record(Self.run("t-done\(index)", status: .succeeded)) }
        runs.record(Self.run("u-done", task: "u", status: .succeeded))
        await runs.flush()
        #expect(try await runs.list(RunFilter(task: "t", status: .succeeded)).map(\.run.id) == ["t-done1", "t-done0"])
        #expect(try await runs.list(RunFilter(task: "t", status: .succeeded, limit: 1)).map(\.run.id) == ["t-done1"])
        #expect(try await runs.list(RunFilter(status: .succeeded, limit: 2)).map(\.run.id) == ["u-done", "t-done1"])
        #expect(try await runs.list(RunFilter(limit: 0)).isEmpty, "a limit of 0 lists nothing")
        #expect(try await runs.list(RunFilter(limit: -1)).isEmpty, "nor does a negative one")
        #expect(try await runs.list(RunFilter(task: "none")).isEmpty)
        #expect(try await runs.list(RunFilter(task: "u", status: .queued)).isEmpty)
    }

    static func aMissingRunIsNoneAndAClaimedChangeOfItIsRefused(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        #expect(try await runs.run(id: "ghost") == nil)
        #expect(try await runs.loadUnfinished().isEmpty)
        var ghost = Self.run("ghost", status: .succeeded)
        ghost.claim = RunClaim(runID: "ghost", holder: "a", fence: 1, leaseUntil: 0)
        #expect(try await runs.settle(ghost) == false, "a claim of a run that is not there holds nothing")
        #expect(try await runs.renew([try #require(ghost.claim)], lease: Self.held).isEmpty)
        let refused = runs.refusedWrites
        runs.record(ghost)
        await runs.flush()
        #expect(runs.refusedWrites == refused + 1, "a claimed change of a run that is not there is refused, not inserted")
        #expect(try await runs.run(id: "ghost") == nil)
    }

    static func retentionOfNothingDeletesNothingAndKeepingNoneDeletesEveryFinishedRun(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        #expect(try await runs.prune(endedBefore: Date().timeIntervalSince1970, keeping: 0) == 0, "an empty store")
        runs.record(Self.run("done", status: .succeeded))
        runs.record(Self.run("failed", status: .failed))
        runs.record(Self.run("waiting"))
        await runs.flush()
        #expect(try await runs.prune(endedBefore: nil, keeping: nil) == 0, "no limit: nothing goes")
        #expect(try await runs.prune(endedBefore: nil, keeping: 5) == 0, "fewer finished runs than kept")
        #expect(try await runs.prune(endedBefore: nil, keeping: 0) == 2)
        #expect(try await runs.list(RunFilter()).map(\.run.id) == ["waiting"])
    }

    static func newRunsCommittedTogetherAreThereOnceDoneAndAnEarlierRecordOfOneIsReplaced(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        let now = Date().timeIntervalSince1970
        #expect(await Self.commitNew(runs, [Self.run("x", queuedAt: now - 2), Self.run("y", queuedAt: now - 1)]))
        #expect(try await runs.loadUnfinished().map(\.id) == ["x", "y"], "written once done, in order")
        #expect(await Self.commitNew(runs, []), "nothing to write is written")
        var again = Self.run("x", priority: .high, queuedAt: now - 2)
        again.input = ["n": "again"]
        #expect(await Self.commitNew(runs, [again]))
        #expect(try await runs.run(id: "x")?.input == ["n": "again"], "a new run with an id already there replaces its record")
        #expect(try await runs.list(RunFilter()).map(\.run.id) == ["y", "x"])
    }

    package static func commitNew(_ runs: any RunStore, _ new: [TaskRun]) async -> Bool {
        await withCheckedContinuation { continuation in runs.commitNew(new) { continuation.resume(returning: $0) } }
    }
}
