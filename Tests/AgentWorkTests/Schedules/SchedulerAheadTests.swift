@testable import AgentLoop
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// Fires decided ahead (Scheduler+Ahead.swift): the fires of an instant are committed together
/// ``Scheduler/lead`` before it and their runs released at it, never before their commit is
/// done. Driven with an injected clock, a real coordinator, and a store and a runner that
/// only record (these tests are about the scheduler, their caller).
@Suite(.ownThreads) struct SchedulerAheadTests {
    final class Clock: @unchecked Sendable {
        var now: Double
        init(now: Double) { self.now = now }
    }

    /// A schedule store whose commits are done when the test says.
    final class HeldStore: ScheduleStore, @unchecked Sendable {
        var commits: [(change: ScheduleCommit, done: @Sendable (Bool) -> Void)] = []
        func commit(_ change: ScheduleCommit, done: @escaping @Sendable (Bool) -> Void) { commits.append((change, done)) }
        func loadStates() async throws -> [String: ScheduleState] { [:] }
        func history(schedule: String, limit: Int) async throws -> [ScheduleHistoryEntry] { [] }
        func pruneHistory(before: Double?, keeping: Int?) async throws -> Int { 0 }
        func lead(holder: String, lease: Double) async throws -> Leadership? { nil }
    }

    @LoopActor struct Setup {
        let loop: EventLoop
        let clock: Clock
        let runner = RecordingRunner()
        let tasks: TaskCoordinator
        let scheduler: Scheduler
        /// The next whole second after the start: the first fire time.
        let first: Double

        /// `count` schedules `every: 1` of one task, started half a second before a whole second
        /// (of the real clock, so that a run's not-before means the same to the coordinator):
        /// the next one, or with `lead` 2 the one after (for a test that needs the real clock
        /// still before it some steps later, on a loaded machine too).
        init(on loop: EventLoop, count: Int, overlap: ScheduleDefinition.Overlap = .skip, store: HeldStore? = nil, lead: Double = 1) {
            self.loop = loop
            first = Date().timeIntervalSince1970.rounded(.down) + lead
            clock = Clock(now: first - 0.5)
            let logger = Logger(label: "test")
            tasks = TaskCoordinator(loop: loop, store: nil, logger: logger)
            tasks.register(runner, for: "command")
            tasks.apply([TaskDefinition(name: "job", type: "command", maxConcurrent: 100)])
            scheduler = Scheduler(loop: loop, store: store, tasks: tasks, logger: logger, useTimer: false)
            let clock = clock
            scheduler.clock = { clock.now }
            let definitions = (0..<count).map { index in
                var definition = ScheduleDefinition(name: "s\(index)", timing: .every(1), timeZone: TimeZone(identifier: "UTC")!, task: "job")
                definition.overlap = overlap
                return definition
            }
            scheduler.start(definitions, saved: [:])
            store?.commits.removeAll()
        }

        /// The timer as it would wake at `time`.
        func wake(at time: Double) {
            clock.now = time
            scheduler.timerExpired()
        }

        /// Runs the loop until `condition` holds (posted commits, the coordinator's timers).
        func turn(until condition: () -> Bool, timeout: Double = 5) {
            let deadline = Date().addingTimeInterval(timeout)
            while !condition(), Date() < deadline { loop.runOnce(maxWait: 0.01) }
        }

        func fired(at planned: Double) -> [ScheduleHistoryEntry] {
            scheduler.recentHistory.filter { $0.planned == planned && $0.outcome == .fired }
        }
    }

    @Test func theFiresOfAnInstantAreCommittedTogetherAheadOfItAndTheirRunsStartAtIt() throws {
        let loop = EventLoop()
        try loop.isolated {
            let store = HeldStore()
            let setup = Setup(on: loop, count: 5, store: store)
            let instant = setup.first

            // 30 ms before the instant: the five fires are decided and handed to the store in one
            // commit, each run not before the instant; nothing runs yet.
            setup.wake(at: instant - 0.03)
            #expect(store.commits.count == 1)
            let commit = try #require(store.commits.first).change
            #expect(commit.runs.count == 5)
            #expect(commit.runs.allSatisfy { $0.notBefore == instant })
            #expect(commit.history.filter { $0.outcome == .fired }.map(\.planned) == Array(repeating: instant, count: 5))
            // Each schedule's state as committed last in the transaction: dealt with through the instant.
            let states = Dictionary(commit.states.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
            #expect(Set(states.keys) == ["s0", "s1", "s2", "s3", "s4"] && states.values.allSatisfy { $0.through == instant })
            #expect(setup.runner.started.isEmpty)

            // Committed before the instant: parked, still nothing runs.
            store.commits[0].done(true)
            setup.turn { setup.scheduler.parked.count == 5 }
            #expect(setup.scheduler.parked.count == 5)
            #expect(setup.runner.started.isEmpty)
            #expect(commit.runs.allSatisfy { setup.tasks.knownRun($0.id) == nil })

            // At the instant: all five runs start, in one pass, without a not-before left.
            setup.wake(at: instant + 0.0001)
            #expect(setup.runner.started.map(\.runID) == commit.runs.map(\.id))
            #expect(commit.runs.allSatisfy { setup.tasks.knownRun($0.id)?.status == .running && setup.tasks.knownRun($0.id)?.notBefore == nil })
            #expect(setup.scheduler.parked.isEmpty)
            // The next second's fires are not decided before their own lead (once the runs ended).
            #expect(store.commits.count == 1)
            for id in setup.runner.running { setup.runner.finish(id, TaskRunOutcome(status: .succeeded)) }
            setup.wake(at: instant + 1 - 0.06)
            #expect(store.commits.count == 1)
            setup.wake(at: instant + 1 - 0.04)
            #expect(store.commits.count == 2 && store.commits[1].change.runs.count == 5)
        }
    }

    @Test func aRunDecidedAheadStartsOnlyOnceItsCommitIsDoneEvenPastItsInstant() throws {
        let loop = EventLoop()
        try loop.isolated {
            let store = HeldStore()
            let setup = Setup(on: loop, count: 3, store: store)
            let instant = setup.first
            setup.wake(at: instant - 0.03)
            let commit = try #require(store.commits.first)
            #expect(commit.change.runs.count == 3)

            // The instant passes while the store is still committing: nothing starts.
            setup.wake(at: instant + 0.02)
            setup.turn(until: { false }, timeout: 0.05)
            #expect(setup.runner.started.isEmpty)

            // Committed: the runs start at once.
            commit.done(true)
            setup.turn { setup.runner.started.count == 3 }
            #expect(setup.runner.started.map(\.runID) == commit.change.runs.map(\.id))
            #expect(setup.scheduler.parked.isEmpty)
        }
    }

    @Test func aScheduleWhosePreviousRunIsStillGoingIsDecidedAtItsInstant() throws {
        let loop = EventLoop()
        try loop.isolated {
            let setup = Setup(on: loop, count: 1, overlap: .skip)
            let first = setup.first
            setup.wake(at: first)
            let run = try #require(setup.runner.started.first)

            // Ahead of the next instant the first run is still going: nothing is decided yet.
            setup.wake(at: first + 1 - 0.03)
            #expect(setup.scheduler.recentHistory.filter { $0.planned == first + 1 }.isEmpty)
            #expect(setup.runner.started.count == 1)

            // It ends before the instant: the fire runs (deciding ahead would have skipped it).
            setup.runner.finish(run.runID, TaskRunOutcome(status: .succeeded))
            setup.wake(at: first + 1 + 0.0001)
            #expect(setup.fired(at: first + 1).count == 1)
            #expect(setup.runner.started.count == 2)
        }
    }

    @Test func aStepOfTheWallClockHandsTheDecidedRunsOverHeldUntilTheirInstant() throws {
        let loop = EventLoop()
        loop.isolated {
            let setup = Setup(on: loop, count: 2, lead: 2)
            let instant = setup.first
            setup.wake(at: instant - 0.03)
            #expect(setup.scheduler.parked.count == 2)

            // The clock is set back by 10 s: the runs go to the coordinator at once, which holds
            // them until their instant (of the wall clock), then starts them.
            setup.clock.now = instant - 10.03
            setup.scheduler.clockStepped(by: -10)
            #expect(setup.scheduler.parked.isEmpty)
            let ids = setup.fired(at: instant).compactMap(\.runID)
            #expect(ids.count == 2)
            #expect(ids.allSatisfy { setup.tasks.knownRun($0)?.status == .queued && setup.tasks.knownRun($0)?.notBefore == instant })
            #expect(setup.runner.started.isEmpty)
            setup.turn(until: { setup.runner.started.count == 2 }, timeout: 10)
            #expect(Date().timeIntervalSince1970 >= instant)
            #expect(Set(setup.runner.started.map(\.runID)) == Set(ids))
            // Fire times already dealt with do not fire again.
            #expect(setup.fired(at: instant).count == 2)
        }
    }
}
