import AgentTestSupport
import Foundation
import Testing

/// `agent-control schedule next EXPRESSION`, run as the real binary.
@Suite(.ownThreads) struct ScheduleNextCommandTests {
    private func next(_ arguments: [String]) throws -> ProgramResult {
        try runProgram("agent-control", ["schedule", "next"] + arguments, timeout: 60)
    }

    @Test func printsTheComingFireTimesAsLocalTimesWithTheirOffsetOneALine() throws {
        let result = try next(["30 2 * * *", "--timezone", "Europe/Berlin", "--after", "2026-03-28T00:00:00Z", "-n", "3"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "2026-03-28T02:30:00+01:00\n2026-03-29T03:00:00+02:00\n2026-03-30T02:30:00+02:00\n")
        #expect(result.stderr.isEmpty)
    }

    @Test func printsTenTimesByDefaultFromNow() throws {
        let result = try next(["*/5 * * * * *", "--timezone", "UTC"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 10)
        let formatter = ISO8601DateFormatter()
        let times = lines.compactMap { formatter.date(from: $0) }
        #expect(times.count == 10, "\(lines)")
        #expect(lines.allSatisfy { $0.hasSuffix("+00:00") })
        // Strictly after the moment it ran, 5 seconds apart.
        #expect(zip(times, times.dropFirst()).allSatisfy { $1.timeIntervalSince($0) == 5 })
        if let first = times.first { #expect(first.timeIntervalSinceNow > -60) }
    }

    @Test func shortcutsAndTheSixFieldFormWork() throws {
        let daily = try next(["@daily", "--timezone", "America/New_York", "--after", "2026-11-01T00:30:00-04:00", "-n", "2"])
        #expect(daily.stdout == "2026-11-02T00:00:00-05:00\n2026-11-03T00:00:00-05:00\n", "\(daily.stderr)")
        let seconds = try next(["0,30 * * * * *", "--timezone", "Australia/Lord_Howe", "--after", "2026-01-01T00:00:00+11:00", "-n", "2"])
        #expect(seconds.stdout == "2026-01-01T00:00:30+11:00\n2026-01-01T00:01:00+11:00\n", "\(seconds.stderr)")
    }

    @Test func anInvalidExpressionPrintsTheFieldAndPartOnStderrAsAUsageError() throws {
        let result = try next(["61 * * * *"])
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains(#"minute "61": out of range: a minute is 0 to 59"#), "\(result.stderr)")
        let fields = try next(["* * * *"])
        #expect(fields.status == 64)
        #expect(fields.stderr.contains("found 4 fields"), "\(fields.stderr)")
        let word = try next(["hourly"])
        #expect(word.status == 64)
        #expect(word.stderr.contains("not a cron expression"), "\(word.stderr)")
    }

    @Test func anUnknownTimeZoneIsAClearError() throws {
        let result = try next(["0 3 * * *", "--timezone", "Mars/Olympus_Mons"])
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains(#"unknown time zone "Mars/Olympus_Mons""#), "\(result.stderr)")
        #expect(result.stderr.contains("tz database"))
    }

    @Test func anExpressionThatNeverFiresIsAUsageError() throws {
        let result = try next(["0 0 30 2 *"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("never fires"), "\(result.stderr)")
    }

    @Test func rebootHasNoCalendarTimes() throws {
        let result = try next(["@reboot"])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("each time the agent starts"))
    }

    @Test func aCountOutOfRangeIsAUsageError() throws {
        let result = try next(["* * * * *", "-n", "0"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("-n must be from 1 to 10000"), "\(result.stderr)")
    }
}
