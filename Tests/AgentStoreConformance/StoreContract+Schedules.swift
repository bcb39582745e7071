import AgentWork
import Foundation
import JSONSchema
import Testing

extension StoreContract {
    /// Schedule commits and the leadership.
    package static let schedules: [StoreCheck] = [
        StoreCheck("aFireCommitsItsRunStateAndHistoryTogether", aFireCommitsItsRunStateAndHistoryTogether),
        StoreCheck("oneLeaderAtATimeAndAFireUnderALapsedLeadershipIsRefusedWhole", oneLeaderAtATimeAndAFireUnderALapsedLeadershipIsRefusedWhole),
        StoreCheck("aStateCommittedAgainIsReplacedAndHistoryIsReadNewestFirstWithinItsLimit", aStateCommittedAgainIsReplacedAndHistoryIsReadNewestFirstWithinItsLimit),
    ]

    package static func fire(_ schedule: String, run id: String, planned: Double, leader: Leadership? = nil) -> ScheduleCommit {
        var state = ScheduleState(name: schedule, through: planned)
        state.lastFire = planned
        state.lastRun = id
        var request = run(id, task: "t")
        request.requestedBy = .schedule
        return ScheduleCommit(states: [state], history: [ScheduleHistoryEntry(schedule: schedule, planned: planned, actual: planned + 0.01,
                                                                              outcome: .fired, runID: id)],
                              runs: [request], leader: leader)
    }

    package static var today: Double { (Date().timeIntervalSince1970 / 1_000).rounded(.down) * 1_000 }

    package static func commit(_ store: any ScheduleStore, _ change: ScheduleCommit) async -> Bool {
        await withCheckedContinuation { continuation in store.commit(change) { continuation.resume(returning: $0) } }
    }

    static func aFireCommitsItsRunStateAndHistoryTogether(_ stores: StoresUnderTest) async throws {
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
    }

    static func oneLeaderAtATimeAndAFireUnderALapsedLeadershipIsRefusedWhole(_ stores: StoresUnderTest) async throws {
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
    }

    static func aStateCommittedAgainIsReplacedAndHistoryIsReadNewestFirstWithinItsLimit(_ stores: StoresUnderTest) async throws {
        let schedules = stores.schedules
        let t0 = Self.today
        #expect(try await schedules.loadStates().isEmpty, "a new store has no state")
        #expect(try await schedules.history(schedule: "tick", limit: 10).isEmpty)
        #expect(await Self.commit(schedules, ScheduleCommit()), "an empty change is written")
        for index in 1...3 { #expect(await Self.commit(schedules, Self.fire("tick", run: "fire-\(index)", planned: t0 + Double(index)))) }
        var paused = ScheduleState(name: "tick", through: t0 + 3)
        paused.paused = true
        #expect(await Self.commit(schedules, ScheduleCommit(states: [paused])))
        let states = try await schedules.loadStates()
        #expect(states.count == 1)
        #expect(states["tick"]?.paused == true, "the last state committed wins")
        #expect(states["tick"]?.lastRun == nil, "a state is replaced whole")
        #expect(try await schedules.history(schedule: "tick", limit: 2).map(\.runID) == ["fire-3", "fire-2"])
        #expect(try await schedules.history(schedule: "tick", limit: 0).isEmpty)
        #expect(try await schedules.history(schedule: "tock", limit: 10).isEmpty, "another schedule's history is its own")
        var removal = ScheduleCommit()
        removal.removed = ["never-there"]
        #expect(await Self.commit(schedules, removal), "removing a schedule without state is nothing")
    }
}
