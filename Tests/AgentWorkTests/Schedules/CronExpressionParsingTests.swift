import AgentTestSupport
@testable import AgentWork
import Foundation
import Testing

/// Every form of a cron expression's fields, read as cronie reads them (checked by the times
/// they fire, in UTC, from an injected instant).
@Suite(.ownThreads) struct CronExpressionParsingTests {
    private func fires(_ expression: String, after start: String = "2026-01-01T00:00:00Z", count: Int) throws -> [String] {
        try CronFixtures.fires(expression, after: start, count: count)
    }

    @Test func fiveFieldsFireOnTheMinuteAndStrictlyAfterTheGivenInstant() throws {
        #expect(try fires("* * * * *", after: "2026-01-01T00:00:00Z", count: 2) == ["2026-01-01T00:01:00+00:00", "2026-01-01T00:02:00+00:00"])
        #expect(try fires("* * * * *", after: "2026-01-01T00:00:59Z", count: 1) == ["2026-01-01T00:01:00+00:00"])
        #expect(try fires("15 10 * * *", count: 2) == ["2026-01-01T10:15:00+00:00", "2026-01-02T10:15:00+00:00"])
    }

    @Test func aSixthFieldInFrontIsTheSecond() throws {
        #expect(try fires("*/20 * * * * *", count: 4) == ["2026-01-01T00:00:20+00:00", "2026-01-01T00:00:40+00:00",
                                                          "2026-01-01T00:01:00+00:00", "2026-01-01T00:01:20+00:00"])
        #expect(try fires("30 0 12 * * *", count: 1) == ["2026-01-01T12:00:30+00:00"])
        #expect(try fires("* * * * * *", after: "2026-01-01T00:00:00.5Z", count: 2) == ["2026-01-01T00:00:01+00:00", "2026-01-01T00:00:02+00:00"])
    }

    @Test func listsRangesAndSteps() throws {
        #expect(try fires("0 8,12,18 * * *", count: 4) == ["2026-01-01T08:00:00+00:00", "2026-01-01T12:00:00+00:00",
                                                           "2026-01-01T18:00:00+00:00", "2026-01-02T08:00:00+00:00"])
        #expect(try fires("*/15 * * * *", count: 3) == ["2026-01-01T00:15:00+00:00", "2026-01-01T00:30:00+00:00", "2026-01-01T00:45:00+00:00"])
        #expect(try fires("1-30/10 * * * *", count: 4) == ["2026-01-01T00:01:00+00:00", "2026-01-01T00:11:00+00:00",
                                                           "2026-01-01T00:21:00+00:00", "2026-01-01T01:01:00+00:00"])
        #expect(try fires("0 22-23,0-1 * * *", count: 3) == ["2026-01-01T01:00:00+00:00", "2026-01-01T22:00:00+00:00", "2026-01-01T23:00:00+00:00"])
        #expect(try fires("5,0-2,40-50/5 9 * * *", count: 7).map { String($0.dropFirst(11).prefix(5)) }
                == ["09:00", "09:01", "09:02", "09:05", "09:40", "09:45", "09:50"])
    }

    @Test func monthNamesAreCaseInsensitive() throws {
        #expect(try fires("0 0 1 JAN,jul *", count: 3) == ["2026-07-01T00:00:00+00:00", "2027-01-01T00:00:00+00:00", "2027-07-01T00:00:00+00:00"])
        #expect(try fires("0 0 1 mar-May *", count: 3) == ["2026-03-01T00:00:00+00:00", "2026-04-01T00:00:00+00:00", "2026-05-01T00:00:00+00:00"])
        #expect(try CronExpression(parsing: "0 0 1 FEB *") == CronExpression(parsing: "0 0 1 2 *"))
    }

    @Test func weekdayNamesAndBothZeroAndSevenAreSunday() throws {
        // 2026-01-04 is a Sunday.
        let sunday = try CronExpression(parsing: "0 6 * * 0")
        #expect(try CronExpression(parsing: "0 6 * * 7") == sunday)
        #expect(try CronExpression(parsing: "0 6 * * sun") == sunday)
        #expect(try fires("0 6 * * 7", count: 2) == ["2026-01-04T06:00:00+00:00", "2026-01-11T06:00:00+00:00"])
        #expect(try fires("0 6 * * MON-FRI", after: "2026-01-02T12:00:00Z", count: 2) == ["2026-01-05T06:00:00+00:00", "2026-01-06T06:00:00+00:00"])
        #expect(try fires("0 6 * * 5-7", count: 4) == ["2026-01-02T06:00:00+00:00", "2026-01-03T06:00:00+00:00",
                                                       "2026-01-04T06:00:00+00:00", "2026-01-09T06:00:00+00:00"])
    }

    @Test func theShortcutsStandForTheirFields() throws {
        #expect(try CronExpression(parsing: "@yearly") == CronExpression(parsing: "0 0 1 1 *"))
        #expect(try CronExpression(parsing: "@annually") == CronExpression(parsing: "0 0 1 1 *"))
        #expect(try CronExpression(parsing: "@monthly") == CronExpression(parsing: "0 0 1 * *"))
        #expect(try CronExpression(parsing: "@weekly") == CronExpression(parsing: "0 0 * * 0"))
        #expect(try CronExpression(parsing: "@daily") == CronExpression(parsing: "0 0 * * *"))
        #expect(try CronExpression(parsing: "@midnight") == CronExpression(parsing: "0 0 * * *"))
        #expect(try CronExpression(parsing: "@hourly") == CronExpression(parsing: "0 * * * *"))
        #expect(try CronExpression(parsing: "@HOURLY") == CronExpression(parsing: "0 * * * *"))
        #expect(try CronExpression(parsing: "@daily") != CronExpression(parsing: "@hourly"))
        #expect(try fires("@weekly", count: 1) == ["2026-01-04T00:00:00+00:00"])
        #expect(try CronExpression(parsing: "@daily").description == "@daily")
    }

    @Test func rebootFiresOnlyAtStartAndHasNoNextTime() throws {
        let reboot = try CronExpression(parsing: "@reboot")
        #expect(reboot.isReboot)
        #expect(reboot.nextFire(after: Date(), in: TimeZone(identifier: "UTC")!) == nil)
        #expect(try !CronExpression(parsing: "@daily").isReboot)
    }

    /// cronie: "1,15 * Sun" runs on the 1st, the 15th and every Sunday; a day field that starts
    /// with * (even */2) makes both fields required.
    @Test func dayOfMonthAndDayOfWeekEitherMatchesWhenBothAreRestricted() throws {
        // January 2026: Fridays are the 2nd, 9th, 16th; the 13th is a Tuesday.
        #expect(try fires("0 0 13 * FRI", count: 4) == ["2026-01-02T00:00:00+00:00", "2026-01-09T00:00:00+00:00",
                                                        "2026-01-13T00:00:00+00:00", "2026-01-16T00:00:00+00:00"])
        #expect(try fires("0 0 13 * *", count: 1) == ["2026-01-13T00:00:00+00:00"])
        #expect(try fires("0 0 * * FRI", count: 1) == ["2026-01-02T00:00:00+00:00"])
    }

    @Test func aDayFieldStartingWithAStarMakesBothDayFieldsRequired() throws {
        // Odd days of the month (*/2 is 1, 3, 5, …) that are Mondays: not Jan 12 nor Jan 26.
        #expect(try fires("0 0 */2 * MON", count: 3) == ["2026-01-05T00:00:00+00:00", "2026-01-19T00:00:00+00:00", "2026-02-09T00:00:00+00:00"])
        // Both restricted without a star: the 2nd, 4th, … or any Monday.
        #expect(try fires("0 0 2-30/2 * MON", count: 3) == ["2026-01-02T00:00:00+00:00", "2026-01-04T00:00:00+00:00", "2026-01-05T00:00:00+00:00"])
    }

    @Test func datesThatDoNotExistAreSkippedOrNeverFire() throws {
        #expect(try fires("0 0 31 * *", count: 3) == ["2026-01-31T00:00:00+00:00", "2026-03-31T00:00:00+00:00", "2026-05-31T00:00:00+00:00"])
        #expect(try fires("0 0 29 2 *", count: 2) == ["2028-02-29T00:00:00+00:00", "2032-02-29T00:00:00+00:00"])
        #expect(try fires("0 0 30 2 *", count: 1).isEmpty)
        #expect(try fires("0 0 31 4,6,9,11 *", count: 1).isEmpty)
        // With a weekday too (both restricted), it fires on those weekdays.
        #expect(try fires("0 0 30 2 MON", count: 1) == ["2026-02-02T00:00:00+00:00"])
        // The 29th of February on a Sunday or a Friday (a starred weekday field is required).
        #expect(try fires("0 0 29 2 */5", count: 2) == ["2032-02-29T00:00:00+00:00", "2036-02-29T00:00:00+00:00"])
    }

    @Test func theDescriptionIsTheExpressionWithItsWhitespaceNormalized() throws {
        let cron = try CronExpression(parsing: "  0\t3  *  * MON-FRI ")
        #expect(cron.description == "0 3 * * MON-FRI")
        #expect(cron == (try CronExpression(parsing: "0 3 * * 1-5")))
    }
}
