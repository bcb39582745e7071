@testable import AgentWork
import Foundation
import Testing

/// A schedule's `at` is read strictly: a date that does not exist is refused at its pointer,
/// not moved to another day (Foundation's parser ran "2027-02-30T00:00:00Z" on 2 March), and a
/// local time at a change of the clocks is its first pass, or refused when the clocks skip it.
struct AtTimeTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    static func instant(_ text: String, in zone: TimeZone = berlin) -> Double? {
        try? AtTime.parse(text, zone: zone).get()
    }

    static func problem(_ text: String, in zone: TimeZone = berlin) -> String? {
        if case .failure(let problem) = AtTime.parse(text, zone: zone) { return problem.message }
        return nil
    }

    @Test func theFormsWrittenSoFarStillReadAsBefore() {
        #expect(Self.instant("2026-11-25T02:00:00Z") == 1_795_572_000)
        #expect(Self.instant("2026-11-25T03:00:00+01:00") == 1_795_572_000)
        #expect(Self.instant("2026-11-25T03:00:00.250+0100") == 1_795_572_000.25)
        #expect(Self.instant("2026-11-25T03:00:00") == 1_795_572_000, "local to the zone, +01:00 in November")
        #expect(Self.instant("2026-11-25 03:00") == 1_795_572_000)
        #expect(Self.instant("2028-02-29T12:00:00Z") != nil, "a leap day")
    }

    @Test func aDayOrTimeThatDoesNotExistIsRefusedSayingWhy() {
        #expect(Self.problem("2027-02-29T00:00:00Z")?.contains("2027-02 has 28 days") == true, "\(Self.problem("2027-02-29T00:00:00Z") ?? "accepted")")
        #expect(Self.problem("2027-02-30T00:00:00Z")?.contains("has 28 days") == true)
        #expect(Self.problem("2027-04-31T12:00:00Z")?.contains("2027-04 has 30 days") == true)
        #expect(Self.problem("2100-02-29T00:00:00Z")?.contains("has 28 days") == true, "2100 is no leap year")
        #expect(Self.problem("2027-13-01T00:00:00Z")?.contains("no month 13") == true)
        #expect(Self.problem("2027-01-01T24:00:00Z")?.contains("hour") == true)
        #expect(Self.problem("2027-01-01T00:00:60Z")?.contains("second") == true)
        for malformed in ["2027-01-01T00:00:00+25:00", "tomorrow", "2027-1-1T00:00:00Z", "2027-01-01T00:00:00Zjunk", "2027-01-01", ""] {
            #expect(Self.problem(malformed)?.contains("expected an ISO 8601 time") == true, "\(malformed): \(Self.problem(malformed) ?? "accepted")")
        }
    }

    @Test func aLocalTimeTheClocksRepeatIsItsFirstPassAndOneTheySkipIsRefused() {
        // 31 October 2027, Berlin: 03:00 CEST becomes 02:00 CET; 02:30 comes twice.
        #expect(Self.instant("2027-10-31T02:30:00") == Self.instant("2027-10-31T02:30:00+02:00"))
        // 28 March 2027: 02:00 CET becomes 03:00 CEST; 02:30 never comes.
        let skipped = Self.problem("2027-03-28T02:30:00")
        #expect(skipped?.contains("does not exist in Europe/Berlin") == true, "\(skipped ?? "accepted")")
        #expect(Self.instant("2027-03-28T03:30:00") == Self.instant("2027-03-28T03:30:00+02:00"))
        #expect(Self.instant("2027-03-28T02:30:00+01:00") != nil, "with an offset it is an instant")
    }
}

/// `"timezone": "GMT+5"` was taken (Foundation reads it as +05:00, the opposite of POSIX's
/// `TZ=UTC+5` and of the tz database's `Etc/GMT+5`): refused, naming the zone to write instead.
struct ScheduleZoneSpellingTests {
    @Test func anOffsetSpelledAsAZoneIsRefusedNamingTheTzDatabasesSpelling() {
        #expect(ScheduleSettings.offsetSpelling("GMT+5") == "+05:00")
        #expect(ScheduleSettings.offsetSpelling("UTC-03:30") == "-03:30")
        for name in ["Etc/GMT+5", "Europe/Berlin", "UTC", "GMT", "GMT+0", "GMT-0", "UTC-0", "America/Argentina/Buenos_Aires"] {
            #expect(ScheduleSettings.offsetSpelling(name) == nil, "\(name)")
        }
    }
}
