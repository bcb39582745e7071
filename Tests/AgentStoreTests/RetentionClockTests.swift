@testable import AgentStore
import AgentTestSupport
import Foundation
import Testing

/// The writer enforces the retention at the start, 10 s after the last pass once a hundredth of
/// the smallest count limit was written, and otherwise only as often as `max_age` needs.
@Suite(.ownThreads) struct RetentionClockTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func theFirstPassIsDueAtOnceAndThe10SecondsAfterOnlyOnceAHundredthOfTheLimitIsWritten() {
        // The defaults: a week, a million events, 100,000 runs.
        var clock = RetentionClock(maximumAge: 7 * 24 * 3600, maximumEvents: 1_000_000, maximumRuns: 100_000)
        #expect(clock.due <= Self.start)
        clock.passed(at: Self.start)
        #expect(clock.due == Self.start.addingTimeInterval(600), "idle: a week's age needs a pass every 10 min, no more")
        clock.written(999)
        #expect(clock.due == Self.start.addingTimeInterval(600), "under a hundredth of 100,000 runs")
        clock.written(1)
        #expect(clock.due == Self.start.addingTimeInterval(10))
        clock.passed(at: Self.start.addingTimeInterval(10))
        #expect(clock.due == Self.start.addingTimeInterval(610))
    }

    @Test func anIdleStoreIsPassedAsOftenAsItsMaximumAgeNeeds() {
        var short = RetentionClock(maximumAge: 60, maximumEvents: nil, maximumRuns: nil)
        short.passed(at: Self.start)
        #expect(short.due == Self.start.addingTimeInterval(10), "a tenth of a minute, but never under 10 s")
        var hour = RetentionClock(maximumAge: 3600, maximumEvents: nil, maximumRuns: nil)
        hour.passed(at: Self.start)
        #expect(hour.due == Self.start.addingTimeInterval(360))
        // Without an age limit only writes can put anything past the limits.
        var counted = RetentionClock(maximumAge: nil, maximumEvents: 50, maximumRuns: nil)
        counted.passed(at: Self.start)
        #expect(counted.due == .distantFuture)
        counted.written(1)
        #expect(counted.due == Self.start.addingTimeInterval(10), "a hundredth of 50 is less than one row")
        var unlimited = RetentionClock(maximumAge: nil, maximumEvents: nil, maximumRuns: nil)
        unlimited.passed(at: Self.start)
        unlimited.written(Int.max)
        unlimited.written(1)
        #expect(unlimited.due == Self.start.addingTimeInterval(600), "no limit: a pass now and then does nothing")
    }

    @Test func aHundredthOfMaxBytesWrittenMakesThePassDueASecondAfterTheLast() {
        var clock = RetentionClock(maximumAge: 7 * 24 * 3600, maximumEvents: 1_000_000, maximumRuns: 100_000, maximumBytes: 100 << 20)
        clock.passed(at: Self.start)
        clock.written(10, bytes: (1 << 20) - 1)
        #expect(clock.due == Self.start.addingTimeInterval(600), "under a hundredth of 100 MiB")
        clock.written(1, bytes: 1 << 10)
        #expect(clock.due == Self.start.addingTimeInterval(1), "a flood is deleted as it comes")
        clock.passed(at: Self.start.addingTimeInterval(1))
        #expect(clock.due == Self.start.addingTimeInterval(601))
        var unlimited = RetentionClock(maximumAge: nil, maximumEvents: nil, maximumRuns: nil, maximumBytes: nil)
        unlimited.passed(at: Self.start)
        unlimited.written(1, bytes: Int.max)
        unlimited.written(1, bytes: 1)
        #expect(unlimited.due == Self.start.addingTimeInterval(600))
    }
}
