@testable import AgentLoop
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// What the scheduler does when the wall clock is set. The timerfd reports a step with
/// ECANCELED (TFD_TIMER_CANCEL_ON_SET); stepping the machine's real clock in a test would
/// disturb everything else running on it, so these tests drive the path ECANCELED takes
/// (``Scheduler/clockStepped(by:)``) with an injected clock, and a real coordinator.
@Suite(.ownThreads) struct SchedulerClockTests {
    final class Clock: @unchecked Sendable { var now: Double = 1_800_000_000 + 100 }

    @LoopActor static func scheduler(on loop: EventLoop, _ timing: ScheduleTiming, catchUp: ScheduleDefinition.CatchUp = .one) -> (Scheduler, Clock, TaskCoordinator) {
        let logger = Logger(label: "test")
        let tasks = TaskCoordinator(loop: loop, store: nil, logger: logger)
        tasks.apply([TaskDefinition(name: "job", type: "command")])
        let scheduler = Scheduler(loop: loop, store: nil, tasks: tasks, logger: logger, useTimer: false)
        let clock = Clock()
        scheduler.clock = { clock.now }
        var definition = ScheduleDefinition(name: "s", timing: timing, timeZone: TimeZone(identifier: "UTC")!, task: "job")
        definition.catchUp = catchUp
        scheduler.start([definition], saved: [:])
        return (scheduler, clock, tasks)
    }

    @LoopActor static func fired(_ scheduler: Scheduler) -> [ScheduleHistoryEntry] { scheduler.recentHistory.filter { $0.outcome == .fired } }

    @Test func aFireTimeIsNeverRunAgainWhenTheClockIsSetBack() throws {
        let loop = EventLoop()
        try loop.isolated {
            let (scheduler, clock, tasks) = Self.scheduler(on: loop, .every(3600))
            let first = try #require(scheduler.entries["s"]?.state.next)
            #expect(first == 1_800_003_600)
            clock.now = first + 0.001
            scheduler.timerExpired()
            #expect(Self.fired(scheduler).map(\.planned) == [first])
            let id = try #require(Self.fired(scheduler).first?.runID)
            #expect(tasks.knownRun(id) != nil, "\(id) is not known")
            // Back by half an hour: the hour just run is ahead again, and must not run twice.
            clock.now = first - 1800
            scheduler.clockStepped(by: -1800)
            #expect(scheduler.entries["s"]?.state.next == first + 3600)
            clock.now = first + 10
            scheduler.timerExpired()
            #expect(Self.fired(scheduler).count == 1)
        }
    }

    @Test func aForwardStepOfUpToThreeHoursMakesTheSkippedTimesDueAsCatchUpSays() throws {
        let loop = EventLoop()
        try loop.isolated {
            let (scheduler, clock, _) = Self.scheduler(on: loop, .every(3600))
            let first = try #require(scheduler.entries["s"]?.state.next)
            clock.now = first + 3600 + 60
            scheduler.clockStepped(by: 2 * 3600)
            let fires = Self.fired(scheduler)
            #expect(fires.count == 1 && fires[0].count == 2 && fires[0].planned == first + 3600 && fires[0].firstPlanned == first, "\(fires)")
            #expect(fires[0].reason?.contains("the wall clock was set forward by 7200 s") == true, "\(fires)")
            #expect(scheduler.entries["s"]?.state.next == first + 7200)
        }
    }

    @Test func aStepOfMoreThanThreeHoursIsAClockCorrection() throws {
        let loop = EventLoop()
        try loop.isolated {
            let (scheduler, clock, _) = Self.scheduler(on: loop, .every(3600))
            let first = try #require(scheduler.entries["s"]?.state.next)
            // Forward by 5 hours: the times skipped are missed, not caught up.
            clock.now = first + 4 * 3600 + 60
            scheduler.clockStepped(by: 5 * 3600)
            #expect(Self.fired(scheduler).isEmpty)
            let missed = try #require(scheduler.recentHistory.first { $0.outcome == .missed })
            #expect(missed.count == 5 && missed.reason?.contains("clock correction") == true, "\(missed)")
            // Back by a day: the schedule starts over from now instead of waiting a day.
            clock.now -= 86400
            scheduler.clockStepped(by: -86400)
            let next = try #require(scheduler.entries["s"]?.state.next)
            #expect(next > clock.now && next <= clock.now + 3600, "\(next) vs \(clock.now)")
        }
    }

    @Test func catchUpAfterDowntimeFollowsEachPolicy() throws {
        let loop = EventLoop()
        loop.isolated {
            for (policy, fires, missed) in [(ScheduleDefinition.CatchUp.none, 0, 5), (.one, 1, 0), (.all, 3, 2)] {
                let logger = Logger(label: "test")
                let tasks = TaskCoordinator(loop: loop, store: nil, logger: logger)
                tasks.apply([TaskDefinition(name: "job", type: "command")])
                let scheduler = Scheduler(loop: loop, store: nil, tasks: tasks, logger: logger, useTimer: false)
                scheduler.clock = { 1_800_000_000 + 5 * 60 + 30 }
                var definition = ScheduleDefinition(name: "s", timing: .every(60), task: "job")
                definition.catchUp = policy
                definition.maxCatchUp = 3
                // Last dealt with 5½ minutes ago: five fire times passed while the agent was down.
                scheduler.start([definition], saved: ["s": ScheduleState(name: "s", through: 1_800_000_000)])
                let lines = scheduler.recentHistory
                #expect(lines.filter { $0.outcome == .fired }.count == fires, "\(policy): \(lines)")
                #expect(lines.filter { $0.outcome == .missed }.reduce(0) { $0 + $1.count } == missed, "\(policy): \(lines)")
                #expect(lines.filter { $0.outcome == .fired }.reduce(0) { $0 + $1.count } + missed == 5, "\(policy)")
                #expect(scheduler.entries["s"]?.state.through == 1_800_000_300)
            }
        }
    }
}
