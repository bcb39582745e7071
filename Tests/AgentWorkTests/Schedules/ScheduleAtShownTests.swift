@testable import AgentWork
import Testing

/// A schedule's `at` is shown as given for any year from 1 to 9999, where a time in
/// nanoseconds of 64 bits reaches from 1677 to 2262 only (an adversary's `at` of 9999-12-31
/// was listed as 2262-04-11T23:47:16.854Z beside its right next fire).
struct ScheduleAtShownTests {
    @Test func anAtBeyondTheNanosecondRangeIsShownAsGiven() {
        #expect(ScheduleTiming.at(253_402_300_799).shown.text == "9999-12-31T23:59:59.000Z")
        #expect(ScheduleTiming.at(-62_135_596_800).shown.text == "0001-01-01T00:00:00.000Z")
        #expect(ScheduleTiming.at(-9_000_000_000).shown.text == "1684-10-19T08:00:00.000Z")
        #expect(ScheduleTiming.at(-1.5).shown.text == "1969-12-31T23:59:58.500Z")
    }

    /// 43.25 is 43.2499999… as a double: shown .250, not truncated to .249.
    @Test func anAtWithinTheRangeKeepsItsMilliseconds() {
        #expect(ScheduleTiming.at(1_795_496_743.25).shown.text == "2026-11-24T05:05:43.250Z")
        #expect(TaskRun.iso(0) == "1970-01-01T00:00:00.000Z")
    }
}
