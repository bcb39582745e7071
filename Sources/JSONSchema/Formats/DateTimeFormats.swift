/// RFC 3339 `date-time`, `full-date`, `full-time` and the ISO 8601 `duration` of RFC 3339
/// appendix A. Only ASCII digits count as digits.
enum DateTimeFormats {
    static func isDateTime(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count > 11, bytes[10] | 0x20 == UInt8(ascii: "t") else { return false }
        return isDate(bytes[0..<10]) && isTime(bytes[11...])
    }

    static func isDate(_ text: String) -> Bool {
        isDate(Array(text.utf8)[...])
    }

    static func isTime(_ text: String) -> Bool {
        isTime(Array(text.utf8)[...])
    }

    /// `YYYY-MM-DD` with the day valid for the month (leap years included).
    private static func isDate(_ b: ArraySlice<UInt8>) -> Bool {
        guard b.count == 10 else { return false }
        let s = b.startIndex
        guard b[s + 4] == UInt8(ascii: "-"), b[s + 7] == UInt8(ascii: "-"),
            let year = number(b[s..<(s + 4)]), let month = number(b[(s + 5)..<(s + 7)]),
            let day = number(b[(s + 8)..<(s + 10)])
        else { return false }
        guard (1...12).contains(month), day >= 1 else { return false }
        return day <= daysIn(month: month, year: year)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2:
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return leap ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// `HH:MM:SS[.frac](Z|±HH:MM)`; second 60 only where the UTC time is 23:59.
    private static func isTime(_ b: ArraySlice<UInt8>) -> Bool {
        let s = b.startIndex
        guard b.count >= 9, b[s + 2] == UInt8(ascii: ":"), b[s + 5] == UInt8(ascii: ":"),
            let hour = number(b[s..<(s + 2)]), let minute = number(b[(s + 3)..<(s + 5)]),
            let second = number(b[(s + 6)..<(s + 8)])
        else { return false }
        guard hour <= 23, minute <= 59, second <= 60 else { return false }
        var i = s + 8
        if b[i] == UInt8(ascii: ".") {
            i += 1
            let fractionStart = i
            while i < b.endIndex, isDigit(b[i]) { i += 1 }
            guard i > fractionStart, i < b.endIndex else { return false }
        }
        var offsetMinutes = 0
        switch b[i] | 0x20 {
        case UInt8(ascii: "z"):
            guard i + 1 == b.endIndex else { return false }
        default:
            guard b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-"), b.endIndex - i == 6,
                b[i + 3] == UInt8(ascii: ":"), let offsetHour = number(b[(i + 1)..<(i + 3)]),
                let offsetMinute = number(b[(i + 4)..<(i + 6)]), offsetHour <= 23, offsetMinute <= 59
            else { return false }
            offsetMinutes = (offsetHour * 60 + offsetMinute) * (b[i] == UInt8(ascii: "+") ? 1 : -1)
        }
        if second == 60 {
            let utc = ((hour * 60 + minute - offsetMinutes) % 1440 + 1440) % 1440
            return utc == 23 * 60 + 59
        }
        return true
    }

    /// ISO 8601 durations as restricted by RFC 3339 appendix A: `P` followed by date units in
    /// Y, M, D order without gaps, an optional `T` with H, M, S likewise, or weeks alone.
    static func isDuration(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.first == UInt8(ascii: "P"), bytes.count > 1 else { return false }
        var dateUnits: [UInt8] = []
        var timeUnits: [UInt8] = []
        var inTime = false
        var i = 1
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "T") {
                guard !inTime else { return false }
                inTime = true
                i += 1
                continue
            }
            let start = i
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
            guard i > start, i < bytes.count else { return false }
            if inTime { timeUnits.append(bytes[i]) } else { dateUnits.append(bytes[i]) }
            i += 1
        }
        if inTime && timeUnits.isEmpty { return false }
        if dateUnits.isEmpty && timeUnits.isEmpty { return false }
        if dateUnits == [UInt8(ascii: "W")] { return timeUnits.isEmpty }
        return isOrderedRun(dateUnits, in: Array("YMD".utf8)) && isOrderedRun(timeUnits, in: Array("HMS".utf8))
    }

    /// Whether `units` is empty or a contiguous run of `order` (e.g. "YM", "MD", not "YD").
    private static func isOrderedRun(_ units: [UInt8], in order: [UInt8]) -> Bool {
        guard let first = units.first else { return true }
        guard let start = order.firstIndex(of: first), start + units.count <= order.count else { return false }
        return Array(order[start..<(start + units.count)]) == units
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in digits {
            guard isDigit(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }
}
