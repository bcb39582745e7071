import AgentTestSupport
@testable import AgentWork
import Foundation
import Testing

/// The missed fire times of a cron expression found without computing each
/// (``ScheduleTiming/fireTimes(after:through:in:keep:)``): the same count, first and newest
/// times as a walk over every one of them by ``CronExpression/nextFire(after:in:)``, across
/// changes of the zone's offset, at a cost that does not grow with the count.
@Suite(.ownThreads) struct CronCountTests {
    /// Every fire time in (after, through], one by one: what the count must agree with.
    static func walked(_ expression: CronExpression, after: Double, through: Double, in zone: TimeZone) -> [Double] {
        var times: [Double] = []
        var cursor = Date(timeIntervalSince1970: after)
        while let time = expression.nextFire(after: cursor, in: zone), time.timeIntervalSince1970 <= through {
            times.append(time.timeIntervalSince1970)
            cursor = time
        }
        return times
    }

    /// (expression, zone, from, to): spans across changes of the offset, fixed and `*` hours.
    static let cases: [(String, String, String, String)] = [
        ("30 2 * * *", "Europe/Berlin", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"),
        ("0 30 2 * * *", "Europe/Berlin", "2026-03-20T00:00:00Z", "2026-04-02T00:00:00Z"),
        ("0 1,2,3 * * *", "Europe/Berlin", "2026-10-20T00:00:00Z", "2026-11-02T00:00:00Z"),
        ("*/10 * * * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", "2026-03-30T00:00:00Z"),
        ("*/10 * * * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", "2026-10-26T00:00:00Z"),
        ("*/15 * * * *", "America/New_York", "2026-02-01T00:00:00Z", "2026-04-01T00:00:00Z"),
        ("0 9 * * 1-5", "America/New_York", "2026-01-01T00:00:00.25Z", "2027-01-01T00:00:00.75Z"),
        ("15,45 1-3 * * *", "Australia/Lord_Howe", "2026-03-25T00:00:00Z", "2026-04-15T00:00:00Z"),
        ("15,45 1-3 * * *", "Australia/Lord_Howe", "2026-09-25T00:00:00Z", "2026-10-15T00:00:00Z"),
        ("0 0 29 2 *", "UTC", "2020-01-01T00:00:00Z", "2030-01-01T00:00:00Z"),
        ("0 0 1,15 * 0", "UTC", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"),
        ("59 23 31 12 *", "Pacific/Apia", "2009-01-01T00:00:00Z", "2013-01-01T00:00:00Z"),
        ("* * * * * *", "UTC", "2026-05-01T10:00:00.5Z", "2026-05-01T13:00:00.5Z"),
    ]

    @Test(arguments: 0..<cases.count)
    func theCountFirstAndNewestAreThoseOfAWalk(_ index: Int) throws {
        let (text, zoneName, from, to) = Self.cases[index]
        let expression = try CronExpression(parsing: text)
        let zone = try #require(TimeZone(identifier: zoneName))
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions.insert(.withFractionalSeconds)
        let after = try #require(formatter.date(from: from.contains(".") ? from : from.replacingOccurrences(of: "Z", with: ".000Z"))).timeIntervalSince1970
        let through = try #require(formatter.date(from: to.contains(".") ? to : to.replacingOccurrences(of: "Z", with: ".000Z"))).timeIntervalSince1970
        let walked = Self.walked(expression, after: after, through: through, in: zone)
        let due = ScheduleTiming.cron(expression).fireTimes(after: after, through: through, in: zone, keep: 5)
        #expect(due.count == walked.count, "\(text) in \(zoneName)")
        #expect(!due.capped)
        #expect(due.first == walked.first, "\(text) in \(zoneName)")
        #expect(due.newest == Array(walked.suffix(5)), "\(text) in \(zoneName): \(due.newest) vs \(walked.suffix(5))")
        #expect(due.computed < 1_500, "\(text) in \(zoneName): \(due.computed) fire times computed for \(walked.count)")
    }

    /// A year of a per-second expression: 31,536,000 fire times, found with a few hundred computed.
    @Test func aYearOfSecondsIsCountedNotWalked() throws {
        let expression = try CronExpression(parsing: "* * * * * *")
        for zone in ["UTC", "Europe/Berlin", "Australia/Lord_Howe"] {
            let through = 1_800_000_000.5
            let due = ScheduleTiming.cron(expression).fireTimes(after: through - 365 * 86_400, through: through, in: TimeZone(identifier: zone)!, keep: 11)
            #expect(due.count == 365 * 86_400 && !due.capped, "\(zone): \(due.count)")
            #expect(due.newest == (0..<11).reversed().map { 1_800_000_000 - Double($0) }, "\(zone): \(due.newest)")
            #expect(due.first == through - 365 * 86_400 + 0.5)
            #expect(due.computed < 1_500, "\(zone): \(due.computed)")
        }
    }

    /// Many wanted (`catch_up: all` with a large `max_catch_up`): the windows tried are counted,
    /// only the times wanted are computed one by one.
    @Test func manyNewestTimesCostAboutAsManyComputed() throws {
        let expression = try CronExpression(parsing: "*/5 * * * * *")
        let through = 1_800_000_000.5
        let expected: [Double] = (0..<5_001).reversed().map { 1_800_000_000 - 5 * Double($0) }
        for zone in ["UTC", "Europe/Berlin"] {
            let due = ScheduleTiming.cron(expression).fireTimes(after: through - 365 * 86_400, through: through, in: TimeZone(identifier: zone)!, keep: 5_001)
            #expect(due.count == 365 * 86_400 / 5 && !due.capped, "\(zone): \(due.count)")
            #expect(due.newest == expected, "\(zone)")
            #expect(due.computed < 5_001 + 1_500, "\(zone): \(due.computed)")
        }
    }

    /// Fixed minute and hour fields that match every second are walked around each change of
    /// the offset, at most ``ScheduleTiming/walkLimit`` times: the count then says "at least".
    @Test func aWalkThatRunsOutSaysTheCountIsALowerBound() throws {
        let expression = try CronExpression(parsing: "* 0-59 0-23 * * *")
        let through = 1_800_000_000.5
        let due = ScheduleTiming.cron(expression).fireTimes(after: through - 365 * 86_400, through: through, in: TimeZone(identifier: "Europe/Berlin")!, keep: 2)
        #expect(due.capped && due.count > 31_000_000 && due.count <= 365 * 86_400, "\(due.count)")
        #expect(due.newest == [1_799_999_999, 1_800_000_000])
        #expect(due.computed <= ScheduleTiming.walkLimit + 1_500, "\(due.computed)")
    }
}
