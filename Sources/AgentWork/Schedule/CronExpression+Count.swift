import Foundation

/// Counting and finding missed fire times without computing each (a catch-up after a year
/// offline of a per-second expression owes 31 million of them; walking them one by one took
/// the loop 80 s).
///
/// Between two changes of the zone's offset the fire times are the local times the fields
/// match, shifted by a constant offset: they are counted day by day (a matching day holds
/// hours × minutes × seconds of them; the first and last day in part, by the same product
/// over the allowed values below an instant). Only where cronie's daylight-saving rules apply
/// — the 3 hours after a change of the offset, for an expression whose minute and hour fields
/// are fixed — are the times computed one by one, at most `budget` of them.
extension CronExpression {
    /// The hours after a change of the offset in which an expression with fixed minute and
    /// hour fields is walked (``nextFire(after:in:)``'s rules for repeated and skipped times).
    package static let walkedAfterChange: Int64 = daylightSavingLimit + 2

    /// The fire times in (`after`, `through`]: how many, and whether the count is only a lower
    /// bound (the walk ran out of `budget`, or the span is longer than 400 years). Each time
    /// computed one by one takes one of `budget`.
    package func countFires(after: Double, through: Double, in zone: TimeZone, budget: inout Int) -> (count: Int, capped: Bool) {
        guard canFire, after.isFinite, through.isFinite, abs(after) < 1e13, abs(through) < 1e13 else { return (0, false) }
        // Fire times are whole seconds: those in [low, high].
        let low = Int64(after.rounded(.down)) + 1
        let high = Int64(through.rounded(.down))
        var count = 0
        var capped = false
        var days = 146_097
        var cursor = low
        var segments = 0
        while cursor <= high {
            segments += 1
            guard segments <= 2_000 else { return (count, true) }
            let offset = Self.offset(of: zone, at: cursor)
            let end = min(high + 1, Self.nextChange(in: zone, after: cursor) ?? high + 1)
            // Fixed minute and hour fields: the start of a stretch may follow a change.
            let walkedEnd = minuteStar || hourStar ? cursor : min(cursor + Self.walkedAfterChange, end)
            if walkedEnd > cursor {
                let walked = walk(from: cursor, to: walkedEnd, first: cursor == low, in: zone, budget: &budget)
                count += walked.count
                capped = capped || walked.capped
            }
            if walkedEnd < end {
                let local = localMatches(from: walkedEnd + offset, through: end - 1 + offset, days: &days)
                count += local.count
                capped = capped || local.capped
            }
            cursor = end
        }
        return (count, capped)
    }

    /// The fire times in [`start`, `end`), computed one by one. A stretch that begins at a
    /// change of the offset is walked from two seconds before it: a fixed time the change
    /// skipped fires at the change, found from before it.
    private func walk(from start: Int64, to end: Int64, first: Bool, in zone: TimeZone, budget: inout Int) -> (count: Int, capped: Bool) {
        var count = 0
        var time = Double(first ? start - 1 : start - 2)
        while true {
            guard budget > 0 else { return (count, true) }
            budget -= 1
            guard let next = nextFire(after: Date(timeIntervalSince1970: time), in: zone)?.timeIntervalSince1970, next < Double(end) else { break }
            if next >= Double(start) { count += 1 }
            time = next
        }
        return (count, false)
    }

    /// The first change of the zone's offset strictly after `time` (whole seconds, as
    /// ``nextFire(after:in:)`` sees it).
    package static func nextChange(in zone: TimeZone, after time: Int64) -> Int64? {
        var from = time
        for _ in 0..<2 {
            guard let change = zone.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: Double(from))) else { return nil }
            let seconds = Int64(change.timeIntervalSince1970.rounded(.up))
            if seconds > time { return seconds }
            from += 1
        }
        return nil
    }

    /// The local times in [`from`, `through`] (local seconds since 1970-01-01T00:00) the
    /// fields match; `days`: whole days counted at most (capped when they run out).
    package func localMatches(from: Int64, through: Int64, days: inout Int) -> (count: Int, capped: Bool) {
        guard from <= through else { return (0, false) }
        let firstDay = Self.floorDivide(from, 86_400)
        let lastDay = Self.floorDivide(through, 86_400)
        let start = from - firstDay * 86_400
        let stop = through - lastDay * 86_400 + 1
        if firstDay == lastDay {
            return (matches(on: firstDay) ? matchesBefore(stop) - matchesBefore(start) : 0, false)
        }
        let perDay = matchesBefore(86_400)
        var count = (matches(on: firstDay) ? perDay - matchesBefore(start) : 0) + (matches(on: lastDay) ? matchesBefore(stop) : 0)
        var day = firstDay + 1
        while day < lastDay {
            guard days > 0 else { return (count, true) }
            days -= 1
            if matches(on: day) { count += perDay }
            day += 1
        }
        return (count, false)
    }

    /// Whether the fields' day, month and weekday match day `day` (days since 1970-01-01).
    package func matches(on day: Int64) -> Bool {
        let (_, month, dayOfMonth) = CivilDate.from(days: day)
        return months & (1 << UInt64(month)) != 0 && dayMatches(day: day, dayOfMonth: dayOfMonth)
    }

    /// How many times of day the hour, minute and second fields match before second `time`
    /// of the day (0...86,400).
    package func matchesBefore(_ time: Int64) -> Int {
        let hour = Int(time / 3600)
        let minute = Int(time % 3600 / 60)
        let second = Int(time % 60)
        let perMinute = seconds.nonzeroBitCount
        let perHour = minutes.nonzeroBitCount * perMinute
        var count = Self.bits(hours, below: hour) * perHour
        guard hour < 24, hours & (1 << UInt64(hour)) != 0 else { return count }
        count += Self.bits(minutes, below: minute) * perMinute
        guard minutes & (1 << UInt64(minute)) != 0 else { return count }
        return count + Self.bits(seconds, below: second)
    }

    package static func bits(_ bits: UInt64, below value: Int) -> Int {
        value >= 64 ? bits.nonzeroBitCount : (bits & ((UInt64(1) << UInt64(value)) - 1)).nonzeroBitCount
    }

    /// The newest `want` fire times in (`after`, `through`], oldest first, found from
    /// `through` backwards: the narrowest window (whole seconds) before `through` that holds
    /// `want` of them, by doubling then halving its width; each try computes at most `want`
    /// times (a few wanted) or counts them (``countFires(after:through:in:budget:)``), so
    /// that only the `want` found are computed one by one. `steps`: the times computed.
    package func newestFires(after: Double, through: Double, in zone: TimeZone, want: Int, steps: inout Int) -> [Double] {
        guard want > 0, through > after else { return [] }
        let span = through - after
        func holds(_ width: Double) -> Bool {
            let start = max(after, through - width)
            guard want > ScheduleTiming.computedAtOnce else { return fires(in: start, through, in: zone, atMost: want, steps: &steps).count >= want }
            var budget = ScheduleTiming.walkLimit
            defer { steps += ScheduleTiming.walkLimit - budget }
            return countFires(after: start, through: through, in: zone, budget: &budget).count >= want
        }
        var width: Double = 1
        while width < span, !holds(width) { width *= 2 }
        var low = width / 2
        var high = min(width, span)
        if width >= span, !holds(span) { low = span }
        while high - low > 1 {
            let middle = ((low + high) / 2).rounded(.down)
            guard middle > low, middle < high else { break }
            if holds(middle) { high = middle } else { low = middle }
        }
        return fires(in: max(after, through - high), through, in: zone, atMost: want + 1, keep: want, steps: &steps)
    }

    /// All the fire times in (`after`, `through`] if there are at most `limit`, else nil.
    package func fires(after: Double, through: Double, in zone: TimeZone, ifAtMost limit: Int, steps: inout Int) -> [Double]? {
        let times = fires(in: after, through, in: zone, atMost: limit + 1, steps: &steps)
        return times.count <= limit ? times : nil
    }

    /// The fire times in (`after`, `through`], at most `atMost` computed; the newest `keep`.
    private func fires(in after: Double, _ through: Double, in zone: TimeZone, atMost: Int, keep: Int = .max, steps: inout Int) -> [Double] {
        var times: [Double] = []
        var found = 0
        var cursor = after
        while found < atMost {
            steps += 1
            guard let time = nextFire(after: Date(timeIntervalSince1970: cursor), in: zone)?.timeIntervalSince1970, time <= through else { break }
            found += 1
            times.append(time)
            if times.count - keep > keep { times.removeFirst(times.count - keep) }
            cursor = time
        }
        return Array(times.suffix(keep))
    }
}
