@testable import AgentBase
import AgentTestSupport
import Testing

/// The console's times: UTC, milliseconds, the same text for event and log lines.
@Suite(.ownThreads) struct ConsoleTimestampTests {
    @Test func timestampsAreUTCWithMillisecondsInBothForms() {
        // 2026-11-24T08:05:09.042Z
        let nanoseconds: Int64 = 1_795_507_509_042_999_999
        #expect(ConsoleOutput.timestamp(nanoseconds: nanoseconds, full: true) == "2026-11-24T08:05:09.042Z")
        #expect(ConsoleOutput.timestamp(nanoseconds: nanoseconds, full: false) == "08:05:09.042")
        #expect(ConsoleOutput.timestamp(nanoseconds: 0, full: true) == "1970-01-01T00:00:00.000Z")
    }
}

extension ConsoleTimestampTests {
    /// A time the stores keep (seconds in a double) is rounded to the millisecond from the
    /// seconds, and any year from 1970 back to 1 and on to 9999 is shown as itself.
    @Test func aStoredTimeInSecondsIsRoundedToTheMillisecondInAnyYear() {
        #expect(ConsoleOutput.timestamp(seconds: 1_795_496_743.25, full: true) == "2026-11-24T05:05:43.250Z", "not .249")
        #expect(ConsoleOutput.timestamp(seconds: 1_795_496_743.0004, full: true) == "2026-11-24T05:05:43.000Z")
        #expect(ConsoleOutput.timestamp(seconds: 1_795_496_743.9996, full: true) == "2026-11-24T05:05:44.000Z")
        #expect(ConsoleOutput.timestamp(seconds: 253_402_300_799, full: true) == "9999-12-31T23:59:59.000Z", "past 2262")
        #expect(ConsoleOutput.timestamp(seconds: -0.001, full: true) == "1969-12-31T23:59:59.999Z")
        #expect(ConsoleOutput.timestamp(seconds: -6_000_000_000, full: true) == "1779-11-13T13:20:00.000Z", "before 1677")
        #expect(ConsoleOutput.timestamp(nanoseconds: -1_000_000, full: true) == "1969-12-31T23:59:59.999Z", "nanoseconds floored")
        #expect(ConsoleOutput.timestamp(seconds: .infinity, full: true).hasPrefix("9999-"), "saturated, not a trap")
        #expect(ConsoleOutput.timestamp(seconds: .nan, full: true).count == 24, "a NaN does not trap")
    }
}
