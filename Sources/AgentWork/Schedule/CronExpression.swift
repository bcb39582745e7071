import Foundation

/// A parsed cron expression: five fields (minute hour day-of-month month day-of-week) or six
/// with seconds first; lists, ranges, steps, month and weekday names; `@hourly`, `@daily`,
/// `@midnight`, `@weekly`, `@monthly`, `@yearly`, `@annually` and `@reboot`.
///
/// Day of month and day of week combine as in cronie: when both are restricted a day matches
/// if either does; when either field starts with `*` (`*`, `*/2`) both must match.
///
/// Two expressions are equal when they fire at the same times by the same rules
/// (`@daily == "0 0 * * *"`), whatever their text.
public struct CronExpression: Sendable, Equatable, CustomStringConvertible {
    /// The expression as written, surrounding whitespace removed and fields separated by one
    /// space.
    public let text: String
    /// True for "@reboot" (fires once when the agent starts; nextFire returns nil).
    public let isReboot: Bool

    // One bit per allowed value: seconds and minutes 0-59, hours 0-23, days of month 1-31,
    // months 1-12, days of week 0-6 (Sunday 0; a 7 is folded into 0).
    package let seconds: UInt64
    package let minutes: UInt64
    package let hours: UInt64
    package let daysOfMonth: UInt64
    package let months: UInt64
    package let daysOfWeek: UInt64
    /// The minute and hour fields start with `*`: cronie's "wildcard" jobs, which keep their
    /// normal rhythm over a daylight-saving change instead of catching up skipped times.
    package let minuteStar: Bool
    package let hourStar: Bool
    /// The day fields start with `*`: then both day fields must match, else either.
    package let dayOfMonthStar: Bool
    package let dayOfWeekStar: Bool

    /// The expression as written (normalized whitespace).
    public var description: String { text }

    /// Whether some calendar day can ever match (false for "0 0 30 2 *").
    package var canFire: Bool {
        guard !isReboot else { return false }
        // Both day fields restricted: any weekday occurs in every month.
        if !dayOfMonthStar && !dayOfWeekStar { return months != 0 }
        // Otherwise the day of month must exist in one of the months (February has a 29th
        // in leap years; every weekday falls on every date within the 400-year cycle).
        let longest = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        for month in 1...12 where months & (1 << UInt64(month)) != 0 {
            let days = daysOfMonth & ((UInt64(1) << UInt64(longest[month] + 1)) - 1)
            if days != 0 { return true }
        }
        return false
    }

    public static func == (lhs: CronExpression, rhs: CronExpression) -> Bool {
        lhs.isReboot == rhs.isReboot && lhs.seconds == rhs.seconds && lhs.minutes == rhs.minutes
            && lhs.hours == rhs.hours && lhs.daysOfMonth == rhs.daysOfMonth && lhs.months == rhs.months
            && lhs.daysOfWeek == rhs.daysOfWeek && lhs.minuteStar == rhs.minuteStar && lhs.hourStar == rhs.hourStar
            && lhs.dayOfMonthStar == rhs.dayOfMonthStar && lhs.dayOfWeekStar == rhs.dayOfWeekStar
    }
}
