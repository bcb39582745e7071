import AgentTestSupport
import Foundation
import Testing

/// nextFire over real transitions of the system's tz database, with injected instants, by
/// cronie's rules: a fixed time the clocks skip fires once right after the jump; a fixed time
/// they repeat fires once (the first pass); a `*` minute or hour keeps its rhythm; a change of
/// more than 3 hours is a clock correction.
@Suite(.ownThreads) struct CronDaylightSavingTests {
    private func fires(_ expression: String, _ zone: String, after start: String, count: Int) throws -> [String] {
        try CronFixtures.fires(expression, after: start, in: zone, count: count)
    }

    // Europe/Berlin 2026: 29 March 02:00 CET → 03:00 CEST; 25 October 03:00 CEST → 02:00 CET.

    @Test func berlinSpringASkippedFixedTimeFiresOnceRightAfterTheJump() throws {
        #expect(try fires("30 2 * * *", "Europe/Berlin", after: "2026-03-28T00:00:00+01:00", count: 3)
                == ["2026-03-28T02:30:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"])
    }

    @Test func berlinSpringSeveralSkippedTimesOfOneExpressionFireOnceTogether() throws {
        #expect(try fires("0,30 2 * * *", "Europe/Berlin", after: "2026-03-29T00:00:00+01:00", count: 3)
                == ["2026-03-29T03:00:00+02:00", "2026-03-30T02:00:00+02:00", "2026-03-30T02:30:00+02:00"])
        // With a time after the gap too, the jump's fire and 03:00 are one.
        #expect(try fires("0,30 2,3 * * *", "Europe/Berlin", after: "2026-03-29T00:00:00+01:00", count: 3)
                == ["2026-03-29T03:00:00+02:00", "2026-03-29T03:30:00+02:00", "2026-03-30T02:00:00+02:00"])
    }

    @Test func berlinSpringATimeAfterTheGapIsUnaffected() throws {
        #expect(try fires("0 3 * * *", "Europe/Berlin", after: "2026-03-28T12:00:00+01:00", count: 2)
                == ["2026-03-29T03:00:00+02:00", "2026-03-30T03:00:00+02:00"])
    }

    @Test func berlinSpringAWildcardHourKeepsFiringHourlyWithoutCatchingUp() throws {
        #expect(try fires("30 * * * *", "Europe/Berlin", after: "2026-03-29T00:00:00+01:00", count: 4)
                == ["2026-03-29T00:30:00+01:00", "2026-03-29T01:30:00+01:00", "2026-03-29T03:30:00+02:00", "2026-03-29T04:30:00+02:00"])
        #expect(try fires("0 * * * *", "Europe/Berlin", after: "2026-03-29T00:30:00+01:00", count: 3)
                == ["2026-03-29T01:00:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-29T04:00:00+02:00"])
    }

    /// A `*` minute makes the expression a wildcard one in cronie: its skipped times are gone.
    @Test func berlinSpringAWildcardMinuteInTheSkippedHourDoesNotFireThatDay() throws {
        #expect(try fires("*/30 2 * * *", "Europe/Berlin", after: "2026-03-28T12:00:00+01:00", count: 2)
                == ["2026-03-30T02:00:00+02:00", "2026-03-30T02:30:00+02:00"])
    }

    @Test func berlinAutumnARepeatedFixedTimeFiresOnlyInTheFirstPass() throws {
        #expect(try fires("30 2 * * *", "Europe/Berlin", after: "2026-10-24T12:00:00+02:00", count: 2)
                == ["2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"])
        // Asked from inside the second pass, it does not fire there either.
        #expect(try fires("30 2 * * *", "Europe/Berlin", after: "2026-10-25T02:10:00+01:00", count: 1)
                == ["2026-10-26T02:30:00+01:00"])
        // A fixed time right after the repeated hour fires normally.
        #expect(try fires("0 3 * * *", "Europe/Berlin", after: "2026-10-25T02:10:00+02:00", count: 1)
                == ["2026-10-25T03:00:00+01:00"])
    }

    @Test func berlinAutumnAWildcardFiresInBothPassesOfTheRepeatedHour() throws {
        #expect(try fires("0,30 * * * *", "Europe/Berlin", after: "2026-10-25T01:45:00+02:00", count: 5)
                == ["2026-10-25T02:00:00+02:00", "2026-10-25T02:30:00+02:00", "2026-10-25T02:00:00+01:00",
                    "2026-10-25T02:30:00+01:00", "2026-10-25T03:00:00+01:00"])
        #expect(try fires("@hourly", "Europe/Berlin", after: "2026-10-25T00:30:00+02:00", count: 4)
                == ["2026-10-25T01:00:00+02:00", "2026-10-25T02:00:00+02:00", "2026-10-25T02:00:00+01:00", "2026-10-25T03:00:00+01:00"])
    }

    // America/New_York 2026: 8 March 02:00 EST → 03:00 EDT; 1 November 02:00 EDT → 01:00 EST.

    @Test func newYorkSpringASkippedFixedTimeFiresOnceRightAfterTheJump() throws {
        #expect(try fires("30 2 * * *", "America/New_York", after: "2026-03-07T12:00:00-05:00", count: 3)
                == ["2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00"])
    }

    @Test func newYorkAutumnARepeatedFixedTimeFiresOnce() throws {
        #expect(try fires("30 1 * * *", "America/New_York", after: "2026-10-31T12:00:00-04:00", count: 2)
                == ["2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"])
        #expect(try fires("*/20 * * * *", "America/New_York", after: "2026-11-01T01:30:00-04:00", count: 5)
                == ["2026-11-01T01:40:00-04:00", "2026-11-01T01:00:00-05:00", "2026-11-01T01:20:00-05:00",
                    "2026-11-01T01:40:00-05:00", "2026-11-01T02:00:00-05:00"])
    }

    @Test func aSixFieldFixedTimeWithSecondsSkippedByTheJumpFiresOnceAtTheJump() throws {
        #expect(try fires("15 45 2 * * *", "America/New_York", after: "2026-03-08T00:00:00-05:00", count: 2)
                == ["2026-03-08T03:00:00-04:00", "2026-03-09T02:45:15-04:00"])
    }

    // Australia/Lord_Howe 2026 (a half-hour shift): 5 April 02:00 +11 → 01:30 +10:30;
    // 4 October 02:00 +10:30 → 02:30 +11.

    @Test func lordHoweSpringATimeInTheSkippedHalfHourFiresOnceAtTheJump() throws {
        #expect(try fires("15 2 * * *", "Australia/Lord_Howe", after: "2026-10-03T12:00:00+10:30", count: 2)
                == ["2026-10-04T02:30:00+11:00", "2026-10-05T02:15:00+11:00"])
        // 02:45 was not skipped: it fires as usual.
        #expect(try fires("45 2 * * *", "Australia/Lord_Howe", after: "2026-10-03T12:00:00+10:30", count: 1)
                == ["2026-10-04T02:45:00+11:00"])
    }

    @Test func lordHoweAutumnARepeatedHalfHourFiresOnceForFixedTimesAndTwiceForWildcards() throws {
        #expect(try fires("45 1 * * *", "Australia/Lord_Howe", after: "2026-04-04T12:00:00+11:00", count: 2)
                == ["2026-04-05T01:45:00+11:00", "2026-04-06T01:45:00+10:30"])
        #expect(try fires("*/15 * * * *", "Australia/Lord_Howe", after: "2026-04-05T01:10:00+11:00", count: 6)
                == ["2026-04-05T01:15:00+11:00", "2026-04-05T01:30:00+11:00", "2026-04-05T01:45:00+11:00",
                    "2026-04-05T01:30:00+10:30", "2026-04-05T01:45:00+10:30", "2026-04-05T02:00:00+10:30"])
        // 01:15 is not repeated (the clocks went back from 02:00 to 01:30).
        #expect(try fires("15 1 * * *", "Australia/Lord_Howe", after: "2026-04-04T12:00:00+11:00", count: 2)
                == ["2026-04-05T01:15:00+11:00", "2026-04-06T01:15:00+10:30"])
    }

    // America/Sao_Paulo: daylight saving until 17 February 2019 (abolished); its last spring
    // jump was 4 November 2018, 00:00 -03 → 01:00 -02.

    @Test func aZoneThatAbolishedDaylightSavingFiresOnPlainLocalTimesAfterward() throws {
        #expect(try fires("30 0 * * *", "America/Sao_Paulo", after: "2018-11-03T12:00:00-03:00", count: 2)
                == ["2018-11-04T01:00:00-02:00", "2018-11-05T00:30:00-02:00"])
        // The first Sunday of November 2019 and later: no jump any more.
        #expect(try fires("30 0 * * *", "America/Sao_Paulo", after: "2019-11-02T12:00:00-03:00", count: 3)
                == ["2019-11-03T00:30:00-03:00", "2019-11-04T00:30:00-03:00", "2019-11-05T00:30:00-03:00"])
        #expect(try fires("0 23 16 2 *", "America/Sao_Paulo", after: "2026-01-01T00:00:00-03:00", count: 1)
                == ["2026-02-16T23:00:00-03:00"])
    }

    // Pacific/Apia skipped 30 December 2011 (23:59:59 -10 on the 29th → 00:00 +14 on the 31st):
    // a change of 24 hours is a correction of the calendar, not daylight saving.

    @Test func aJumpOfMoreThanThreeHoursIsAClockCorrectionAndSkippedTimesDoNotFire() throws {
        #expect(try fires("0 12 * * *", "Pacific/Apia", after: "2011-12-29T00:00:00-10:00", count: 2)
                == ["2011-12-29T12:00:00-10:00", "2011-12-31T12:00:00+14:00"])
        #expect(try fires("0 0 * * *", "Pacific/Apia", after: "2011-12-29T12:00:00-10:00", count: 2)
                == ["2011-12-31T00:00:00+14:00", "2012-01-01T00:00:00+14:00"])
    }

    // America/Juneau left Russian time in 1867: 19 October 15:33:31 LMT +15:02:19 → 18 October
    // 15:33:32 LMT -08:57:41, a day repeated.

    @Test func aBackwardChangeOfMoreThanThreeHoursFiresRepeatedTimesAgain() throws {
        let times = try fires("0 18 * * *", "America/Juneau", after: "1867-10-17T12:00:00Z", count: 3)
        #expect(times.count == 3)
        #expect(times.first?.hasPrefix("1867-10-18T18:00:00+15:02") == true, "\(times)")
        #expect(times.dropFirst().first?.hasPrefix("1867-10-18T18:00:00-08:57") == true, "\(times)")
    }

    @Test func aZoneWithoutTransitionsFiresOnLocalTimes() throws {
        #expect(try fires("0 9 * * *", "Asia/Kolkata", after: "2026-03-29T00:00:00+05:30", count: 2)
                == ["2026-03-29T09:00:00+05:30", "2026-03-30T09:00:00+05:30"])
    }
}
