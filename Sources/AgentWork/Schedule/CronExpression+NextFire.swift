import Foundation

extension CronExpression {
    /// A change of the zone's offset larger than this is a clock correction, not daylight
    /// saving (cronie's threshold).
    package static let daylightSavingLimit: Int64 = 3 * 3600

    /// The first fire time strictly after `instant`, in `zone`, by cronie's DST rules
    /// (a local time skipped by a forward jump fires once right after the jump; a repeated
    /// one fires once; a change of more than 3 hours is a clock correction, not DST).
    /// nil when there is none (e.g. "0 0 30 2 *").
    ///
    /// In detail, for a change of the zone's UTC offset by at most 3 hours: an expression whose
    /// minute and hour fields are fixed (no leading `*`) fires once at the instant of a forward
    /// jump when any of its times fell into the skipped hour, and does not fire again in the
    /// repeated hour of a backward jump; one with a `*` minute or hour ("wildcard" in cronie,
    /// e.g. `*/15 * * * *`, `0 * * * *`) just keeps firing on the local times that exist, in
    /// both passes of a repeated hour. A change of more than 3 hours fires nothing for the
    /// skipped times and fires repeated times again.
    public func nextFire(after instant: Date, in zone: TimeZone) -> Date? {
        guard canFire else { return nil }
        let seconds = instant.timeIntervalSince1970.rounded(.down)
        // Far outside any calendar this runs on (and Int64(_:) would trap on a non-finite value).
        guard seconds.isFinite, abs(seconds) < 1e13 else { return nil }
        var time = Int64(seconds) + 1
        let wildcard = minuteStar || hourStar
        // Each round covers one stretch of constant offset; a zone changes it a few times a year.
        for _ in 0..<2_000 {
            let offset = Self.offset(of: zone, at: time)
            let transition = zone.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: Double(time)))
                .map { Int64($0.timeIntervalSince1970.rounded(.up)) }
            var localStart = time + offset
            if !wildcard, let repeated = Self.repeatedLocalTimes(in: zone, at: time) {
                // Fixed times of a repeated hour fired in its first pass.
                localStart = max(localStart, repeated)
            }
            guard let local = nextLocalMatch(atOrAfter: localStart) else { return nil }
            guard let transition, transition > time else {
                return Date(timeIntervalSince1970: Double(local - offset))
            }
            if local - offset < transition { return Date(timeIntervalSince1970: Double(local - offset)) }
            let jump = Self.offset(of: zone, at: transition) - offset
            if jump > 0, jump <= Self.daylightSavingLimit, !wildcard, local < transition + offset + jump {
                // A fixed time fell into the hour the clocks skipped: once, right after the jump.
                return Date(timeIntervalSince1970: Double(transition))
            }
            time = transition
        }
        return nil
    }

    /// The zone's UTC offset at an instant, in seconds.
    package static func offset(of zone: TimeZone, at time: Int64) -> Int64 {
        Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(time))))
    }

    /// When `time` falls into the second pass of local times repeated by a backward change of
    /// at most 3 hours: the first local time (in local seconds) after the repeated ones.
    package static func repeatedLocalTimes(in zone: TimeZone, at time: Int64) -> Int64? {
        // Such a change lies within the last 3 hours.
        var last: Int64?
        var cursor = Date(timeIntervalSince1970: Double(time - daylightSavingLimit - 1))
        while let next = zone.nextDaylightSavingTimeTransition(after: cursor), next.timeIntervalSince1970 <= Double(time) {
            last = Int64(next.timeIntervalSince1970.rounded(.up))
            cursor = next
        }
        guard let last else { return nil }
        let before = offset(of: zone, at: last - 1)
        let after = offset(of: zone, at: last)
        let jump = after - before
        guard jump < 0, -jump <= daylightSavingLimit, time < last - jump else { return nil }
        return last + before
    }

    /// The first local time (seconds since 1970-01-01T00:00 local, ignoring offsets) at or after
    /// `start` that the fields match; nil if none within 400 years (a whole Gregorian cycle).
    package func nextLocalMatch(atOrAfter start: Int64) -> Int64? {
        var day = Self.floorDivide(start, 86_400)
        let secondOfDay = start - day * 86_400
        var (year, month, dayOfMonth) = CivilDate.from(days: day)
        var hour = Int(secondOfDay / 3600)
        var minute = Int(secondOfDay % 3600 / 60)
        var second = Int(secondOfDay % 60)
        let lastYear = year + 400
        func nextDay() {
            day += 1
            (year, month, dayOfMonth) = CivilDate.from(days: day)
            (hour, minute, second) = (0, 0, 0)
        }
        while year <= lastYear {
            guard let matchingMonth = Self.next(months, atOrAfter: month) else {
                day = CivilDate.days(year: year + 1, month: 1, day: 1) - 1
                nextDay()
                continue
            }
            if matchingMonth != month {
                day = CivilDate.days(year: year, month: matchingMonth, day: 1) - 1
                nextDay()
                continue
            }
            guard dayMatches(day: day, dayOfMonth: dayOfMonth) else {
                nextDay()
                continue
            }
            guard let matchingHour = Self.next(hours, atOrAfter: hour) else {
                nextDay()
                continue
            }
            if matchingHour != hour { (hour, minute, second) = (matchingHour, 0, 0) }
            guard let matchingMinute = Self.next(minutes, atOrAfter: minute) else {
                if hour == 23 { nextDay() } else { (hour, minute, second) = (hour + 1, 0, 0) }
                continue
            }
            if matchingMinute != minute { (minute, second) = (matchingMinute, 0) }
            guard let matchingSecond = Self.next(seconds, atOrAfter: second) else {
                if minute < 59 {
                    (minute, second) = (minute + 1, 0)
                } else if hour < 23 {
                    (hour, minute, second) = (hour + 1, 0, 0)
                } else {
                    nextDay()
                }
                continue
            }
            return day * 86_400 + Int64(hour * 3600 + minute * 60 + matchingSecond)
        }
        return nil
    }

    package func dayMatches(day: Int64, dayOfMonth: Int) -> Bool {
        let weekday = Int(Self.floorModulo(day + 4, 7))  // 1970-01-01 was a Thursday; Sunday is 0
        let byMonth = daysOfMonth & (1 << UInt64(dayOfMonth)) != 0
        let byWeek = daysOfWeek & (1 << UInt64(weekday)) != 0
        return dayOfMonthStar || dayOfWeekStar ? byMonth && byWeek : byMonth || byWeek
    }

    /// The lowest set bit at or above `value`.
    package static func next(_ bits: UInt64, atOrAfter value: Int) -> Int? {
        guard value < 64 else { return nil }
        let remaining = bits & ~((UInt64(1) << UInt64(value)) - 1)
        return remaining == 0 ? nil : remaining.trailingZeroBitCount
    }

    package static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    package static func floorModulo(_ value: Int64, _ divisor: Int64) -> Int64 {
        let remainder = value % divisor
        return remainder < 0 ? remainder + divisor : remainder
    }
}

/// Proleptic Gregorian dates as days since 1970-01-01 (Howard Hinnant's civil-date algorithms).
package enum CivilDate {
    package static func days(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    package static func from(days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }
}
