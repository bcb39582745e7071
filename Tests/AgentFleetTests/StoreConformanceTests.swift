#if Fleet
import AgentFleet
@testable import AgentStore
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// The stores an engine may run on, each tested the same way: SQLite (one agent's own file)
/// and PostgreSQL (a fleet's shared database, a real server started by the tests).
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres
    var testDescription: String { rawValue }
}

/// One implementation's run and schedule stores, open on an empty database.
struct StoresUnderTest: Sendable {
    var runs: any RunStore
    var schedules: any ScheduleStore
    var workflows: any WorkflowStore
    var memory: any MemoryStore
    var close: @Sendable () async -> Void

    static func open(_ kind: StoreKind) async throws -> StoresUnderTest {
        switch kind {
        case .sqlite:
            let folder = TestPaths.temporaryDirectory("conformance")
            let store = try AgentStore(path: folder + "/agent.sqlite", settings: StoreSettings(), logger: Logger(label: "test"))
            return StoresUnderTest(runs: try SQLiteRunStore(store: store), schedules: try SQLiteScheduleStore(store: store),
                                   workflows: try SQLiteWorkflowStore(store: store), memory: try SQLiteMemoryStore(store: store)) {
                store.close()
                try? FileManager.default.removeItem(atPath: folder)
            }
        case .postgres:
            if let reason = PostgresTestServer.unavailableReason { try Test.cancel("no PostgreSQL server for the tests: \(reason)") }
            let store = try await PostgresFleetStore.connect(try fleetSettings(database: try PostgresTestServer.require().makeDatabase()),
                                                             logger: Logger(label: "test"))
            return StoresUnderTest(runs: store.runs, schedules: store.schedules, workflows: store.workflows, memory: store.memory) {
                await store.shutDown()
            }
        }
    }

    /// Fleet settings for a database of the tests' server, as an agent's settings give them.
    static func fleetSettings(database: String, agent: String = "test-agent") throws -> FleetSettings {
        let server = try PostgresTestServer.require()
        let json: JSONValue = ["postgres": .string(server.url(database: database)), "password": "${env:PGPASSWORD}", "agent_id": .string(agent)]
        return try #require(try FleetSettings(json, environment: ["PGPASSWORD": PostgresTestServer.password]))
    }
}

/// What the engine relies on from a store, checked on every implementation (issue 26: "both
/// pass one shared conformance test suite"): runs recorded, read back, listed and pruned;
/// claims in the queue's order, exclusive, leased and fenced; schedule commits atomic and
/// refused under a lapsed leadership.
///
/// Serialized: a full run under a CPU hog here once saw every PostgreSQL case of this suite —
/// 23 stores connecting at the same moment, each with a pool of up to 8 connections, while
/// other tests' agents held theirs — wait forever for their first connection (the cause was
/// not found; the other in-process stores of that run connected). One case at a time takes
/// about as long as the slowest did together.
@Suite(.ownThreads, .serialized) struct StoreConformanceTests {
    static func run(_ id: String, task: String = "t", status: TaskRun.Status = .queued, priority: TaskRun.Priority = .normal,
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
    static let held = 3_600.0

    // MARK: Runs

    @Test(arguments: StoreKind.allCases)
    func everyChangeIsWrittenAndTheLastOneWins(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
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
        #expect(try await runs.list(RunFilter(task: "t")).map(\.id) == ["a"])
        #expect(try await runs.list(RunFilter(status: .queued)).map(\.id) == ["b"])
        #expect(try await runs.list(RunFilter(limit: 1)).map(\.id) == ["b"], "newest first")
        #expect(try await runs.run(id: "nope") == nil)
        await stores.close()
    }

    @Test(arguments: StoreKind.allCases)
    func interruptionsAreKeptAndAnAbandonedRunIsFinished(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
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
        #expect(try await stores.runs.list(RunFilter(status: .abandoned)).map(\.id) == ["abandoned"])
        await stores.close()
    }

    @Test(arguments: StoreKind.allCases)
    func unfinishedRunsComeBackOldestFirst(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
        for (index, status) in [TaskRun.Status.queued, .succeeded, .running, .retrying, .cancelled, .queued].enumerated() {
            stores.runs.record(Self.run("r\(index)", status: status))
        }
        await stores.runs.flush()
        #expect(try await stores.runs.loadUnfinished().map(\.id) == ["r0", "r2", "r3", "r5"])
        await stores.close()
    }

    @Test(arguments: StoreKind.allCases)
    func retentionDeletesOldAndSurplusFinishedRunsButNeverUnfinishedOnes(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
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
        #expect(Set(try await runs.list(RunFilter(limit: 100)).map(\.id)) == ["waiting", "new3", "new4"])
        await stores.close()
    }

    // MARK: Claims

    @Test(arguments: StoreKind.allCases)
    func claimsFollowPriorityThenDueTimeThenArrival(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
        let runs = stores.runs
        let now = Date().timeIntervalSince1970
        runs.record(Self.run("low", priority: .low, queuedAt: now - 50))
        runs.record(Self.run("normal-late", queuedAt: now - 10))
        runs.record(Self.run("normal-early", queuedAt: now - 20))
        runs.record(Self.run("normal-same-time-1", queuedAt: now - 5))
        runs.record(Self.run("normal-same-time-2", queuedAt: now - 5))
        runs.record(Self.run("critical", priority: .critical, queuedAt: now))
        runs.record(Self.run("high-not-yet", priority: .high, notBefore: now + 3600))
        runs.record(Self.run("other-task", task: "other", priority: .critical))
        runs.record(Self.run("done", status: .succeeded))
        await runs.flush()
        var order: [String] = []
        for _ in 0..<7 {
            order += try await runs.claim(ClaimRequest(holder: "a", room: ["t": 1], lease: Self.held)).map(\.id)
        }
        #expect(order == ["critical", "normal-early", "normal-late", "normal-same-time-1", "normal-same-time-2", "low"],
                "a run not due yet, another task's and a finished one are not taken")
        let other = try await runs.claim(ClaimRequest(holder: "a", room: ["other": 5, "t": 5], lease: Self.held))
        #expect(other.map(\.id) == ["other-task"])
        await stores.close()
    }

    @Test(arguments: StoreKind.allCases)
    func aClaimedRunIsRunningWithTheNextAttemptAndAClaimOfItsOwn(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
        let runs = stores.runs
        runs.record(Self.run("x"))
        runs.record(Self.run("y"))
        await runs.flush()
        let claimed = try await runs.claim(ClaimRequest(holder: "host-a", room: ["t": 2], lease: Self.held))
        #expect(claimed.map(\.id) == ["x", "y"])
        for run in claimed {
            #expect(run.status == .running)
            #expect(run.attempt == 1)
            #expect(run.startedAt != nil)
            #expect(run.claim?.holder == "host-a")
            #expect(run.claim?.runID == run.id)
        }
        let fences = claimed.compactMap(\.claim?.fence)
        #expect(Set(fences).count == 2, "each claim has its own fencing token")
        // Read back (PostgreSQL's claim writes columns, not the record: they are laid over it).
        let stored = try #require(try await runs.run(id: "x"), "the claim is in the store")
        #expect(stored.status == .running)
        #expect(stored.attempt == 1)
        #expect(stored.agent == "host-a")
        #expect(stored.startedAt == claimed.first?.startedAt)
        #expect(try await runs.list(RunFilter(task: "t", limit: 10)).map(\.attempt) == [1, 1])
        #expect(try await runs.claim(ClaimRequest(holder: "host-b", room: ["t": 5], lease: Self.held)).isEmpty, "a held run is not claimed again")
        await stores.close()
    }

    @Test(arguments: StoreKind.allCases)
    func claimersAtTheSameTimeNeverTakeTheSameRun(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
        let runs = stores.runs
        for index in 0..<200 { runs.record(Self.run("run\(index)")) }
        await runs.flush()
        let taken = try await withThrowingTaskGroup(of: [String].self) { group in
            for holder in 0..<4 {
                group.addTask {
                    var mine: [String] = []
                    while true {
                        let batch = try await runs.claim(ClaimRequest(holder: "h\(holder)", room: ["t": 7], lease: Self.held))
                        if batch.isEmpty { return mine }
                        mine += batch.map(\.id)
                    }
                }
            }
            var all: [[String]] = []
            for try await list in group { all.append(list) }
            return all
        }
        let flat = taken.flatMap { $0 }
        #expect(flat.count == 200)
        #expect(Set(flat).count == 200, "a run was claimed twice")
        await stores.close()
    }

    @Test(arguments: StoreKind.allCases)
    func aLapsedLeaseIsRescuedAndTheStaleHoldersResultIsRefused(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
        let runs = stores.runs
        runs.record(Self.run("job"))
        await runs.flush()
        let first = try #require(try await runs.claim(ClaimRequest(holder: "dead", room: ["t": 1], lease: Self.held)).first)
        // Renewed while it lives: still held.
        #expect(try await runs.renew([try #require(first.claim)], lease: Self.held) == ["job"])
        #expect(try await runs.claim(ClaimRequest(holder: "rescuer", room: ["t": 1], lease: Self.held)).isEmpty)
        // The holder's last renewal is short, then it falls silent: the lease lapses.
        #expect(try await runs.renew([try #require(first.claim)], lease: 0.2) == ["job"])
        try await Task.sleep(for: .seconds(0.5))
        let second = try #require(try await runs.claim(ClaimRequest(holder: "rescuer", room: ["t": 1], lease: Self.held)).first,
                                  "a run whose lease lapsed is claimable again")
        #expect(second.id == "job", "the same run, so the same idempotency key")
        #expect(second.attempt == 2)
        #expect(second.interruptions == 1, "the dead holder's attempt was interrupted")
        #expect(try #require(second.claim).fence > (try #require(first.claim).fence))
        // The presumed-dead holder wakes up with a result: refused, by its token.
        var late = first
        late.status = .succeeded
        late.output = ["by": "dead"]
        late.endedAt = Date().timeIntervalSince1970
        #expect(try await runs.settle(late) == false)
        #expect(try await runs.renew([try #require(first.claim)], lease: Self.held).isEmpty, "the stale holder cannot renew either")
        let refusedBefore = runs.refusedWrites
        runs.record(late)
        await runs.flush()
        #expect(runs.refusedWrites == refusedBefore + 1, "a fire-and-forget write of a stale holder is refused and counted")
        let rescued = try #require(try await runs.run(id: "job"))
        #expect(rescued.status == .running)
        #expect(rescued.attempt == 2, "each claim is an attempt, though neither wrote the record")
        #expect(rescued.agent == "rescuer")
        #expect(rescued.interruptions == 1)
        var done = second
        done.status = .succeeded
        done.output = ["by": "rescuer"]
        done.endedAt = Date().timeIntervalSince1970
        #expect(try await runs.settle(done))
        let stored = try #require(try await runs.run(id: "job"))
        #expect(stored.status == .succeeded)
        #expect(stored.output == ["by": "rescuer"])
        #expect(stored.attempt == 2)
        #expect(stored.interruptions == 1)
        await stores.close()
    }

    @Test(arguments: StoreKind.allCases)
    func theNextLapseOfAnotherHoldersLeaseIsKnownSoThatARescueNeedNotWaitForThePoll(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
        let runs = stores.runs
        runs.record(Self.run("held"))
        runs.record(Self.run("elsewhere", task: "u"))
        await runs.flush()
        #expect(try await runs.nextLapse(tasks: ["t"], holder: "b") == nil, "nothing is held")
        let claimed = try await runs.claim(ClaimRequest(holder: "a", room: ["t": 1, "u": 1], lease: 3600))
        #expect(claimed.count == 2)
        let left = try #require(try await runs.nextLapse(tasks: ["t"], holder: "b"))
        #expect(left > 0 && left <= 3600, "seconds until a's lease lapses: \(left)")
        #expect(try await runs.nextLapse(tasks: ["t"], holder: "a") == nil, "a holder's own leases are not another's")
        #expect(try await runs.nextLapse(tasks: ["v"], holder: "b") == nil, "only the tasks asked about")
        var done = try #require(claimed.first { $0.id == "held" })
        done.status = .succeeded
        done.endedAt = Date().timeIntervalSince1970
        #expect(try await runs.settle(done))
        #expect(try await runs.nextLapse(tasks: ["t"], holder: "b") == nil, "a finished run holds no lease")
        runs.record(Self.run("short"))
        await runs.flush()
        #expect(try await runs.claim(ClaimRequest(holder: "a", room: ["t": 1], lease: 1)).map(\.id) == ["short"])
        try await Task.sleep(for: .seconds(1.5))
        #expect(try await runs.nextLapse(tasks: ["t"], holder: "b") == 0, "a lease that lapsed already: claim now")
        await stores.close()
    }

    @Test(arguments: StoreKind.allCases)
    func aRunLetGoForARetryIsClaimableWhenDueWithTheSameId(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
        let runs = stores.runs
        runs.record(Self.run("flaky"))
        runs.record(Self.run("later"))
        await runs.flush()
        let claimed = try await runs.claim(ClaimRequest(holder: "a", room: ["t": 2], lease: Self.held))
        #expect(claimed.map(\.id) == ["flaky", "later"])
        // Both fail and are let go: one due again now (its backoff over), one in an hour (far
        // enough ahead that no pause of this test process makes it due before the next claim).
        for var run in claimed {
            run.status = .retrying
            run.error = "exit 1"
            run.nextAttemptAt = Date().timeIntervalSince1970 + (run.id == "flaky" ? -0.1 : 3_600)
            runs.record(run)
        }
        await runs.flush()
        #expect(runs.refusedWrites == 0)
        let retried = try await runs.claim(ClaimRequest(holder: "b", room: ["t": 5], lease: Self.held))
        #expect(retried.map(\.id) == ["flaky"], "a run let go is claimable when due, not before its next attempt")
        let again = try #require(retried.first)
        #expect(again.id == "flaky")
        #expect(again.attempt == 2)
        #expect(again.claim?.holder == "b")
        await stores.close()
    }

    // MARK: Schedules

    static func fire(_ schedule: String, run id: String, planned: Double, leader: Leadership? = nil) -> ScheduleCommit {
        var state = ScheduleState(name: schedule, through: planned)
        state.lastFire = planned
        state.lastRun = id
        var request = run(id, task: "t")
        request.requestedBy = .schedule
        return ScheduleCommit(states: [state], history: [ScheduleHistoryEntry(schedule: schedule, planned: planned, actual: planned + 0.01,
                                                                              outcome: .fired, runID: id)],
                              runs: [request], leader: leader)
    }

    static var today: Double { (Date().timeIntervalSince1970 / 1_000).rounded(.down) * 1_000 }

    static func commit(_ store: any ScheduleStore, _ change: ScheduleCommit) async -> Bool {
        await withCheckedContinuation { continuation in store.commit(change) { continuation.resume(returning: $0) } }
    }

    @Test(arguments: StoreKind.allCases)
    func aFireCommitsItsRunStateAndHistoryTogether(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
        // Times of today: the SQLite store's retention prunes history older than its maximum age.
        let t0 = Self.today
        #expect(await Self.commit(stores.schedules, Self.fire("tick", run: "fire-1", planned: (t0 + 1_000))))
        #expect(await Self.commit(stores.schedules, Self.fire("tick", run: "fire-2", planned: (t0 + 2_000))))
        var missed = ScheduleCommit()
        missed.history = [ScheduleHistoryEntry(schedule: "tock", planned: (t0 + 3_000), actual: (t0 + 3_100), outcome: .missed, reason: "the agent was not running",
                                               count: 3, firstPlanned: (t0 + 2_800))]
        #expect(await Self.commit(stores.schedules, missed))
        let states = try await stores.schedules.loadStates()
        #expect(states["tick"]?.through == (t0 + 2_000))
        #expect(states["tick"]?.lastRun == "fire-2")
        #expect(try await stores.runs.run(id: "fire-1")?.requestedBy == .schedule)
        #expect(try await stores.runs.loadUnfinished().map(\.id) == ["fire-1", "fire-2"])
        let history = try await stores.schedules.history(schedule: "tick", limit: 10)
        #expect(history.map(\.runID) == ["fire-2", "fire-1"], "newest first")
        #expect(history.first?.planned == (t0 + 2_000))
        #expect(try await stores.schedules.history(schedule: "tick", limit: 1).count == 1)
        let tock = try #require(try await stores.schedules.history(schedule: "tock", limit: 10).first)
        #expect(tock.count == 3)
        #expect(tock.firstPlanned == (t0 + 2_800))
        #expect(tock.reason == "the agent was not running")
        var removal = ScheduleCommit()
        removal.removed = ["tick"]
        #expect(await Self.commit(stores.schedules, removal))
        #expect(try await stores.schedules.loadStates()["tick"] == nil)
        #expect(try await stores.schedules.history(schedule: "tick", limit: 10).count == 2, "the history stays")
        await stores.close()
    }

    @Test(arguments: StoreKind.allCases)
    func oneLeaderAtATimeAndAFireUnderALapsedLeadershipIsRefusedWhole(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
        let t0 = Self.today
        let schedules = stores.schedules
        let a = try #require(try await schedules.lead(holder: "a", lease: Self.held))
        #expect(try await schedules.lead(holder: "b", lease: Self.held) == nil, "the lease runs: b cannot lead")
        let renewed = try #require(try await schedules.lead(holder: "a", lease: Self.held))
        #expect(renewed.fence == a.fence, "a renewal keeps the fence")
        #expect(await Self.commit(schedules, Self.fire("tick", run: "by-a", planned: (t0 + 1_000), leader: renewed)))
        // a's last renewal is short, then it falls silent: the lease lapses.
        #expect(try await schedules.lead(holder: "a", lease: 0.2)?.fence == a.fence)
        try await Task.sleep(for: .seconds(0.5))
        let b = try #require(try await schedules.lead(holder: "b", lease: Self.held), "a lapsed lease passes to the next")
        #expect(b.fence > a.fence)
        #expect(try await schedules.lead(holder: "a", lease: Self.held) == nil, "the old leader cannot take it back while b's lease runs")
        // The old leader fires the next time late: nothing of it is written.
        #expect(await Self.commit(schedules, Self.fire("tick", run: "late-by-a", planned: (t0 + 2_000), leader: renewed)) == false)
        #expect(try await stores.runs.run(id: "late-by-a") == nil)
        #expect(try await schedules.loadStates()["tick"]?.through == (t0 + 1_000))
        #expect(try await schedules.history(schedule: "tick", limit: 10).map(\.runID) == ["by-a"])
        // The new leader fires it once.
        #expect(await Self.commit(schedules, Self.fire("tick", run: "by-b", planned: (t0 + 2_000), leader: b)))
        #expect(try await schedules.loadStates()["tick"]?.lastRun == "by-b")
        await stores.close()
    }
}
#endif
