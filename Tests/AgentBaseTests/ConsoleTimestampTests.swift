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
