@testable import AgentLoop
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// A long catch-up (issue 34, item 9): after a year offline a per-second schedule is caught up
/// in one evaluation whose work is bounded — `all` runs at most `max_catch_up`, `one` runs one
/// and records one line with the folded count, and the timer is not left due again and again.
/// The real Scheduler with an injected clock, a store that records its commits, and the timer
/// driven as the loop would drive it (an instant already passed expires at once).
@Suite(.ownThreads) struct ScheduleCatchUpTests {
    final class Clock: @unchecked Sendable { var now: Double = 1_800_000_000.5 }

    /// A schedule store that records what is committed and is done at once.
    final class RecordingStore: ScheduleStore, @unchecked Sendable {
        var commits: [ScheduleCommit] = []
        func commit(_ change: ScheduleCommit, done: @escaping @Sendable (Bool) -> Void) {
            commits.append(change)
            done(true)
        }
        func loadStates() async throws -> [String: ScheduleState] { [:] }
        func history(schedule: String, limit: Int) async throws -> [ScheduleHistoryEntry] { [] }
        func pruneHistory(before: Double?, keeping: Int?) async throws -> Int { 0 }
        func lead(holder: String, lease: Double) async throws -> Leadership? { nil }
    }

    static let year: Double = 365 * 86_400
    /// The shortest period the settings allow, in both kinds.
    static let perSecond = ScheduleTiming.cron(try! CronExpression(parsing: "* * * * * *"))

    @LoopActor struct Setup {
        let loop: EventLoop
        let clock = Clock()
        let store = RecordingStore()
        let scheduler: Scheduler

        /// Schedule "s" of task "job", whose saved state says it last dealt with a fire time
        /// `offline` seconds ago; the agent starts now.
        init(on loop: EventLoop, _ timing: ScheduleTiming, zone: String = "UTC", catchUp: ScheduleDefinition.CatchUp, maxCatchUp: Int = 10,
             offline: Double = ScheduleCatchUpTests.year, window: Double? = nil) {
            self.loop = loop
            let logger = Logger(label: "test")
            let tasks = TaskCoordinator(loop: loop, store: nil, logger: logger)
            tasks.apply([TaskDefinition(name: "job", type: "command", maxConcurrent: 100)])
            scheduler = Scheduler(loop: loop, store: store, tasks: tasks, logger: logger, useTimer: false)
            let clock = clock
            scheduler.clock = { clock.now }
            var definition = ScheduleDefinition(name: "s", timing: timing, timeZone: TimeZone(identifier: zone)!, task: "job")
            definition.catchUp = catchUp
            definition.maxCatchUp = maxCatchUp
            definition.catchUpWindow = window
            scheduler.start([definition], saved: ["s": ScheduleState(name: "s", through: clock.now - offline)])
        }

        /// The timer as the loop drives it while the clock stands still: as long as the instant
        /// it is armed for has passed, it expires (at most `limit` times). How often it did.
        func driveTimer(limit: Int = 5) -> Int {
            var turns = 0
            while turns < limit, let wake = earliestWake(), wake <= clock.now {
                scheduler.timerExpired()
                turns += 1
            }
            return turns
        }

        /// What ``Scheduler/rearm()`` arms the timer for.
        func earliestWake() -> Double? {
            var earliest = scheduler.parked.compactMap { scheduler.releaseTimes[$0.id] }.min()
            for entry in scheduler.entries.values {
                guard let dueAt = entry.dueAt else { continue }
                let wake = entry.declinedAhead == dueAt ? dueAt : dueAt - Scheduler.lead
                earliest = min(earliest ?? wake, wake)
            }
            return earliest
        }

        var committed: [ScheduleHistoryEntry] { store.commits.flatMap(\.history) }
        func lines(_ outcome: ScheduleHistoryEntry.Outcome) -> [ScheduleHistoryEntry] { committed.filter { $0.outcome == outcome } }
        var entry: Scheduler.Entry? { scheduler.entries["s"] }
    }

    /// The newest whole second at or before the clock: the last fire time of a per-second schedule.
    static let newest: Double = 1_800_000_000

    @Test(arguments: [ScheduleCatchUpTests.perSecond, .every(1)])
    func catchUpAllAfterAYearRunsAtMostMaxCatchUpOnce(_ timing: ScheduleTiming) throws {
        let loop = EventLoop()
        loop.isolated {
            let setup = Setup(on: loop, timing, catchUp: .all, maxCatchUp: 10)
            let turns = setup.driveTimer()
            let fired = setup.lines(.fired)
            #expect(fired.count == 10, "\(timing): \(fired.count) runs after \(turns) turns of the timer")
            #expect(fired.map(\.planned) == (0..<10).reversed().map { Self.newest - Double($0) }, "\(timing): \(fired.map(\.planned))")
            let missed = setup.lines(.missed)
            #expect(missed.count == 1, "\(timing): \(missed)")
            #expect(missed.first?.count == Int(Self.year) - 10, "\(timing): \(missed)")
            #expect(setup.entry?.state.through == Self.newest)
            #expect(turns == 0, "\(timing): the timer was due again \(turns) times after the catch-up")
            #expect(setup.entry?.fired == 10 && setup.entry?.skipped == 0)
            #expect(setup.scheduler.computedFireTimes < 2_000, "\(timing): \(setup.scheduler.computedFireTimes) fire times computed")
        }
    }

    @Test(arguments: [ScheduleCatchUpTests.perSecond, .every(1)])
    func catchUpOneAfterAYearRecordsOneFoldedRun(_ timing: ScheduleTiming) throws {
        let loop = EventLoop()
        loop.isolated {
            let setup = Setup(on: loop, timing, catchUp: .one)
            let turns = setup.driveTimer()
            let fired = setup.lines(.fired)
            #expect(fired.count == 1, "\(timing): \(fired.count) runs after \(turns) turns")
            #expect(fired.first?.count == Int(Self.year) && fired.first?.planned == Self.newest, "\(timing): \(fired)")
            #expect(fired.first?.reason?.contains("\(Int(Self.year)) fire times folded into one run") == true, "\(timing): \(fired)")
            #expect(setup.lines(.skipped).isEmpty, "\(timing): \(setup.lines(.skipped).count) skip lines, \(setup.entry?.skipped ?? 0) skipped")
            #expect(setup.committed.count == 1, "\(timing): \(setup.committed.count) lines")
            #expect(turns == 0, "\(timing): the timer was due again \(turns) times after the catch-up")
            #expect(setup.scheduler.computedFireTimes < 2_000, "\(timing): \(setup.scheduler.computedFireTimes) fire times computed")
        }
    }

    /// In a zone with daylight saving the count crosses two changes of the offset: a `*` hour
    /// keeps its rhythm, so every second of the year is a fire time.
    @Test func aPerSecondCronInBerlinCountsEverySecondOfTheYear() throws {
        let loop = EventLoop()
        try loop.isolated {
            let setup = Setup(on: loop, .cron(try CronExpression(parsing: "* * * * * *")), zone: "Europe/Berlin", catchUp: .one)
            let fired = setup.lines(.fired)
            #expect(fired.count == 1 && fired.first?.count == Int(Self.year), "\(fired)")
            #expect(setup.driveTimer() == 0)
        }
    }

    @Test(arguments: [ScheduleCatchUpTests.perSecond, .every(1)])
    func catchUpNoneAfterAYearRecordsOneMissedLine(_ timing: ScheduleTiming) throws {
        let loop = EventLoop()
        loop.isolated {
            let setup = Setup(on: loop, timing, catchUp: .none)
            #expect(setup.driveTimer() == 0)
            #expect(setup.lines(.fired).isEmpty)
            let missed = setup.lines(.missed)
            #expect(missed.count == 1 && missed.first?.count == Int(Self.year) && missed.first?.planned == Self.newest, "\(timing): \(missed)")
            #expect(setup.scheduler.computedFireTimes < 2_000, "\(timing): \(setup.scheduler.computedFireTimes)")
        }
    }

    /// A loop that was held up for a year (the machine suspended: no step of the wall clock is
    /// reported) finds it all due at its next turn: one turn deals with all of it.
    @Test(arguments: [ScheduleCatchUpTests.perSecond, .every(1)])
    func aTimerLateByAYearCatchesUpInOneTurn(_ timing: ScheduleTiming) throws {
        let loop = EventLoop()
        loop.isolated {
            let setup = Setup(on: loop, timing, catchUp: .one, offline: 0.25)
            setup.clock.now += Self.year
            #expect(setup.driveTimer() == 1)
            let fired = setup.lines(.fired)
            #expect(fired.count == 1 && fired.first?.count == Int(Self.year) && fired.first?.planned == Self.newest + Self.year, "\(timing): \(fired)")
            #expect(setup.lines(.skipped).isEmpty && setup.entry?.state.through == Self.newest + Self.year)
            #expect(setup.scheduler.computedFireTimes < 2_000, "\(timing): \(setup.scheduler.computedFireTimes)")
        }
    }

    /// `catch_up_window`: the older times are one missed line, the window's one folded run.
    @Test func aYearBeyondTheCatchUpWindowIsOneMissedLine() throws {
        let loop = EventLoop()
        loop.isolated {
            let setup = Setup(on: loop, Self.perSecond, catchUp: .one, window: 3600)
            #expect(setup.driveTimer() == 0)
            let missed = setup.lines(.missed)
            #expect(missed.count == 1 && missed.first?.count == Int(Self.year) - 3600, "\(missed)")
            let fired = setup.lines(.fired)
            #expect(fired.count == 1 && fired.first?.count == 3600, "\(fired)")
            #expect(setup.scheduler.computedFireTimes < 2_000, "\(setup.scheduler.computedFireTimes)")
        }
    }

    /// Fixed minute and hour fields that match every second, in a zone with daylight saving:
    /// the times around a change of the offset are computed one by one up to the limit, and
    /// the history line says how many at least.
    @Test func aCountThatIsALowerBoundSaysAtLeast() throws {
        let loop = EventLoop()
        try loop.isolated {
            let setup = Setup(on: loop, .cron(try CronExpression(parsing: "* 0-59 0-23 * * *")), zone: "Europe/Berlin", catchUp: .one)
            #expect(setup.driveTimer() == 0)
            let fired = setup.lines(.fired)
            #expect(fired.count == 1 && fired.first?.reason?.hasPrefix("at least ") == true && fired.first?.planned == Self.newest, "\(fired)")
            #expect(setup.scheduler.computedFireTimes <= ScheduleTiming.walkLimit + 2_000, "\(setup.scheduler.computedFireTimes)")
        }
    }
}
