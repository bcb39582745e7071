extension CronExpression {
    /// Parses a cron expression; the error names the field, the offending part and what was
    /// expected.
    public init(parsing text: String) throws(CronExpressionError) {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }).map(String.init)
        let normalized = words.joined(separator: " ")
        guard let first = words.first else {
            throw CronExpressionError(field: "expression", part: text,
                                      message: "the expression is empty; expected \(Self.expectedShape)")
        }
        if first.hasPrefix("@") {
            guard let expansion = Self.shortcuts[first.lowercased()] else {
                throw CronExpressionError(field: "expression", part: first,
                                          message: "unknown shortcut; expected one of \(Self.shortcutNames) (for a fixed interval use \"every\" instead of \"cron\")")
            }
            guard words.count == 1 else {
                throw CronExpressionError(field: "expression", part: normalized,
                                          message: "the shortcut \(first) stands alone; remove the fields after it, or write five fields instead")
            }
            if expansion.isEmpty {
                self.init(text: normalized, isReboot: true, seconds: 0, minutes: 0, hours: 0, daysOfMonth: 0, months: 0, daysOfWeek: 0,
                          minuteStar: false, hourStar: false, dayOfMonthStar: false, dayOfWeekStar: false)
                return
            }
            let parsed = try CronExpression(parsing: expansion)
            self = parsed.withText(normalized)
            return
        }
        guard words.count == 5 || words.count == 6 else {
            throw CronExpressionError(field: "expression", part: normalized,
                                      message: "found \(words.count) field\(words.count == 1 ? "" : "s"); expected \(Self.expectedShape)")
        }
        let hasSeconds = words.count == 6
        let fields = hasSeconds ? Array(words.dropFirst()) : words
        let seconds = hasSeconds ? try Self.second.parse(words[0]).bits : 1
        let minute = try Self.minute.parse(fields[0])
        let hour = try Self.hour.parse(fields[1])
        let dayOfMonth = try Self.dayOfMonth.parse(fields[2])
        let month = try Self.month.parse(fields[3])
        var dayOfWeek = try Self.dayOfWeek.parse(fields[4])
        if dayOfWeek.bits & (1 << 7) != 0 { dayOfWeek.bits = (dayOfWeek.bits & ~(1 << 7)) | 1 }
        self.init(text: normalized, isReboot: false, seconds: seconds, minutes: minute.bits, hours: hour.bits,
                  daysOfMonth: dayOfMonth.bits, months: month.bits, daysOfWeek: dayOfWeek.bits,
                  minuteStar: minute.star, hourStar: hour.star, dayOfMonthStar: dayOfMonth.star, dayOfWeekStar: dayOfWeek.star)
    }

    private func withText(_ text: String) -> CronExpression {
        CronExpression(text: text, isReboot: isReboot, seconds: seconds, minutes: minutes, hours: hours, daysOfMonth: daysOfMonth,
                       months: months, daysOfWeek: daysOfWeek, minuteStar: minuteStar, hourStar: hourStar,
                       dayOfMonthStar: dayOfMonthStar, dayOfWeekStar: dayOfWeekStar)
    }

    package static let expectedShape = "five fields (minute hour day-of-month month day-of-week, e.g. \"30 2 * * MON-FRI\"), six with seconds first, or a shortcut such as @daily"

    /// The shortcuts and the fields they stand for ("" for @reboot), as in cronie.
    package static let shortcuts: [String: String] = [
        "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
        "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *", "@reboot": "",
    ]
    package static let shortcutNames = "@hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually, @reboot"

    package static let second = CronField(name: "second", unit: "a second", low: 0, high: 59)
    package static let minute = CronField(name: "minute", unit: "a minute", low: 0, high: 59)
    package static let hour = CronField(name: "hour", unit: "an hour", low: 0, high: 23)
    package static let dayOfMonth = CronField(name: "day of month", unit: "a day of month", low: 1, high: 31)
    package static let month = CronField(name: "month", unit: "a month", low: 1, high: 12,
                                 names: ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"])
    package static let dayOfWeek = CronField(name: "day of week", unit: "a day of week", low: 0, high: 7,
                                     names: ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"], note: " (0 and 7 are both Sunday)")
}

/// One field of a cron expression: its range and names, and how to read it.
package struct CronField: Sendable {
    package var name: String
    package var unit: String
    package var low: Int
    package var high: Int
    /// Names for low, low + 1, … (months from 1, weekdays from 0), matched case-insensitively.
    package var names: [String] = []
    package var note: String = ""

    /// The allowed values as bits, and whether the field starts with `*` (cronie's "star").
    package func parse(_ text: String) throws(CronExpressionError) -> (bits: UInt64, star: Bool) {
        var bits: UInt64 = 0
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
        for item in items {
            guard !item.isEmpty else {
                throw error(text, "a list has an empty item; separate values with single commas, e.g. 1,15,30")
            }
            bits |= try parseItem(String(item))
        }
        return (bits, text.hasPrefix("*"))
    }

    private func parseItem(_ item: String) throws(CronExpressionError) -> UInt64 {
        let pieces = item.split(separator: "/", omittingEmptySubsequences: false)
        guard pieces.count <= 2 else {
            throw error(item, "a step has one slash, e.g. */5 or 1-30/2")
        }
        let base = String(pieces[0])
        var step = 1
        if pieces.count == 2 {
            let text = String(pieces[1])
            guard let value = Int(text), text.allSatisfy(\.isASCII), (1...high).contains(value) else {
                throw error(item, "the step after the slash must be a whole number from 1 to \(high)")
            }
            step = value
        }
        let first: Int
        let last: Int
        if base == "*" {
            (first, last) = (low, high)
        } else if let dash = base.firstIndex(of: "-") {
            let from = String(base[..<dash])
            let to = String(base[base.index(after: dash)...])
            first = try value(from, in: item)
            last = try value(to, in: item)
            guard first <= last else {
                // A week that ends on Sunday: Sunday is 7 too (MON-SUN is Monday to Sunday, not SUN-MON).
                if name == "day of week", last == 0 {
                    throw error(item, "the range runs backwards; Sunday is 7 as well: write \(from)-7 for \(from) to Sunday")
                }
                throw error(item, "the range runs backwards; for a range that wraps around, write two ranges in a list (\(from)-\(high),\(low)-\(to)), or for the values from \(to) to \(from), the lower value first (\(to)-\(from))")
            }
        } else {
            first = try value(base, in: item)
            guard pieces.count == 1 else {
                throw error(item, "a step needs a range or * before the slash; write \(base)-\(high)/\(step) for every \(step) from \(base)")
            }
            last = first
        }
        var bits: UInt64 = 0
        for value in stride(from: first, through: last, by: step) { bits |= 1 << UInt64(value) }
        return bits
    }

    /// A number or a name of this field.
    private func value(_ text: String, in item: String) throws(CronExpressionError) -> Int {
        if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) {
            guard let value = Int(text), (low...high).contains(value) else {
                throw error(text, "out of range: \(unit) is \(low) to \(high)\(note)")
            }
            return value
        }
        if let index = names.firstIndex(of: text.uppercased()) {
            return (name == "month" ? 1 : 0) + index
        }
        throw error(text.isEmpty ? item : text, "expected \(expected)")
    }

    private var expected: String {
        var text = "a number from \(low) to \(high)\(note)"
        if let first = names.first, let last = names.last { text += " or a name \(first)…\(last)" }
        return text + ", a range (\(low)-\(low + 4)), a step (*/5, \(low)-\(high)/2), a list of these, or *"
    }

    private func error(_ part: String, _ message: String) -> CronExpressionError {
        CronExpressionError(field: name, part: part, message: message)
    }
}
