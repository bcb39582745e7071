import AgentTestSupport
@testable import AgentWork
import Testing

/// Every invalid form is refused with the field, the offending part and what was expected.
@Suite(.ownThreads) struct CronExpressionErrorTests {
    private func error(_ expression: String) -> CronExpressionError? {
        do {
            _ = try CronExpression(parsing: expression)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        // expression, field, part, words of the message
        ("", "expression", "", "empty"),
        ("* * * *", "expression", "* * * *", "found 4 fields; expected five fields"),
        ("0 0 0 * * * *", "expression", "0 0 0 * * * *", "found 7 fields"),
        ("61 * * * *", "minute", "61", "out of range: a minute is 0 to 59"),
        ("* 24 * * *", "hour", "24", "an hour is 0 to 23"),
        ("* * 0 * *", "day of month", "0", "a day of month is 1 to 31"),
        ("* * 32 * *", "day of month", "32", "1 to 31"),
        ("* * * 13 *", "month", "13", "a month is 1 to 12"),
        ("* * * * 8", "day of week", "8", "0 to 7 (0 and 7 are both Sunday)"),
        ("60 * * * * *", "second", "60", "a second is 0 to 59"),
        ("99999999999999999999 * * * *", "minute", "99999999999999999999", "out of range"),
        ("5-2 * * * *", "minute", "5-2", "the range runs backwards; for a range that wraps around, write two ranges in a list (5-59,0-2), or for the values from 2 to 5, the lower value first (2-5)"),
        ("* * * * MON-SUN", "day of week", "MON-SUN", "Sunday is 7 as well: write MON-7 for MON to Sunday"),
        ("* * * * 6-0", "day of week", "6-0", "write 6-7 for 6 to Sunday"),
        ("* * * * FRI-MON", "day of week", "FRI-MON", "two ranges in a list (FRI-7,0-MON)"),
        ("*/0 * * * *", "minute", "*/0", "the step after the slash must be a whole number from 1 to 59"),
        ("*/60 * * * *", "minute", "*/60", "from 1 to 59"),
        ("* */x * * *", "hour", "*/x", "whole number from 1 to 23"),
        ("5/15 * * * *", "minute", "5/15", "a step needs a range or * before the slash; write 5-59/15"),
        ("*/5/2 * * * *", "minute", "*/5/2", "one slash"),
        ("1,,2 * * * *", "minute", "1,,2", "empty item"),
        ("1, * * * *", "minute", "1,", "empty item"),
        ("a * * * *", "minute", "a", "expected a number from 0 to 59, a range"),
        ("JAN * * * *", "minute", "JAN", "expected a number from 0 to 59"),
        ("-5 * * * *", "minute", "-5", "expected a number"),
        ("1-2-3 * * * *", "minute", "2-3", "expected a number"),
        ("? * * * *", "minute", "?", "expected a number"),
        ("* * L * *", "day of month", "L", "expected a number from 1 to 31"),
        ("* * * FOO *", "month", "FOO", "or a name JAN…DEC"),
        ("* * * JANUARY *", "month", "JANUARY", "JAN…DEC"),
        ("* * * * MONDAY", "day of week", "MONDAY", "or a name SUN…SAT"),
        ("* * * * 1#2", "day of week", "1#2", "expected a number from 0 to 7"),
        ("@fortnightly", "expression", "@fortnightly", "unknown shortcut; expected one of @hourly, @daily"),
        ("@daily 5", "expression", "@daily 5", "stands alone"),
        ("@every 5m", "expression", "@every", "unknown shortcut"),
    ])
    func anInvalidExpressionNamesTheFieldAndTheOffendingPart(_ expression: String, _ field: String, _ part: String, _ words: String) {
        guard let error = error(expression) else {
            Issue.record("\"\(expression)\" was accepted")
            return
        }
        #expect(error.field == field, "\(expression): \(error)")
        #expect(error.part == part, "\(expression): \(error)")
        #expect(error.message.contains(words), "\(expression): \(error)")
        #expect(error.description == "\(field) \"\(part)\": \(error.message)")
    }

    @Test func anExpressionThatCanNeverFireIsValidButHasNoNextTime() throws {
        let cron = try CronExpression(parsing: "0 0 30 2 *")
        #expect(cron.nextFire(after: CronFixtures.instant("2026-01-01T00:00:00Z"), in: CronFixtures.zone("UTC")) == nil)
    }
}

/// A schedule whose cron can never fire is refused at its pointer, where it was taken and then
/// listed with no next fire, never saying why; one that fires on a weekday of such a date, and
/// @reboot, are taken.
struct ScheduleNeverFiresTests {
    @Test func aScheduleWhoseCronNeverFiresIsRefusedAtItsPointer() {
        let read = ScheduleSettings.read([
            "feb30": ["cron": "0 0 30 2 *", "run": ["task": "t"]],
            "apr31": ["cron": "0 0 31 2,4 *", "run": ["task": "t"]],
            "mondays": ["cron": "0 0 30 2 MON", "run": ["task": "t"]],
            "boot": ["cron": "@reboot", "run": ["task": "t"]],
        ])
        #expect(read.schedules.map(\.name).sorted() == ["boot", "mondays"])
        #expect(read.issues.map(\.pointer) == ["/schedules/apr31/cron", "/schedules/feb30/cron"])
        #expect(read.issues.allSatisfy { $0.message.contains("never fires") && $0.message.contains("February has 29 days at most") },
                "\(read.issues)")
    }
}
