@testable import AgentStore
import Foundation
import Testing

/// The writer enforces the retention at the start, every 10 s while something is written, and
/// on an idle store only as often as `max_age` needs.
@Suite struct RetentionClockTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func theFirstPassIsDueAtOnceAndThe10SecondsAfterOnlyWhenSomethingWasWritten() {
        var clock = RetentionClock(maximumAge: 7 * 24 * 3600)
        #expect(clock.due <= Self.start)
        clock.passed(at: Self.start)
        // Nothing written: a week's age needs a pass every 10 min, no more.
        #expect(clock.due == Self.start.addingTimeInterval(600))
        clock.written()
        #expect(clock.due == Self.start.addingTimeInterval(10))
    }

    @Test func anIdleStoreIsPassedAsOftenAsItsMaximumAgeNeeds() {
        var short = RetentionClock(maximumAge: 60)
        short.passed(at: Self.start)
        #expect(short.due == Self.start.addingTimeInterval(10), "a tenth of a minute, but never under 10 s")
        var hour = RetentionClock(maximumAge: 3600)
        hour.passed(at: Self.start)
        #expect(hour.due == Self.start.addingTimeInterval(360))
        // Without an age limit only a write can put anything past the limits.
        var unlimited = RetentionClock(maximumAge: nil)
        unlimited.passed(at: Self.start)
        #expect(unlimited.due == .distantFuture)
        unlimited.written()
        #expect(unlimited.due == Self.start.addingTimeInterval(10))
    }
}
