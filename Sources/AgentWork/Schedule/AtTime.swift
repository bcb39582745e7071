import Foundation

/// A schedule's `at`: one instant, written as ISO 8601 with an offset
/// (`2026-11-25T02:00:00Z`, `…+01:00`) or as a local date and time of the schedule's zone
/// (`2026-11-25T02:00:00`, `2026-11-25 02:00`). Read strictly: Foundation's parser moved a
/// date that does not exist (30 February, 31 April, 29 February of a common year, an offset of
/// 25 hours) to another day without a word, and a one-shot job then ran on that day.
///
/// A local time repeated by a backward change of the clocks is its first pass (as a cron
/// expression's fixed time fires); one skipped by a forward change is refused, saying so.
package enum AtTime {
    /// Why a text is no `at`: a message naming what was found and what is expected.
    package struct Problem: Error, Equatable {
        package var message: String
    }

    /// The instant (seconds since 1970) `text` names, or why it names none.
    package static func parse(_ text: String, zone: TimeZone) -> Result<Double, Problem> {
        guard let fields = Fields(text) else {
            return .failure(Problem(message: "expected an ISO 8601 time, with an offset (2026-11-25T02:00:00Z, 2026-11-25T03:00:00+01:00) or local to \"timezone\" (2026-11-25T02:00:00); found \"\(text)\""))
        }
        if let problem = fields.impossibility {
            return .failure(Problem(message: "\"\(text)\" is no time: \(problem)"))
        }
        let days = CivilDate.days(year: fields.year, month: fields.month, day: fields.day)
        let local = Double(days * 86_400 + Int64(fields.hour * 3600 + fields.minute * 60 + fields.second)) + fields.fraction
        if let offset = fields.offset { return .success(local - Double(offset)) }
        return resolve(local, in: zone).mapError { _ in
            Problem(message: "\"\(text)\" does not exist in \(zone.identifier): its clocks jump over that time that day; write the time after the jump, or give an offset (…+01:00)")
        }
    }

    /// The first instant whose local time in `zone` is `local` (local seconds since 1970).
    static func resolve(_ local: Double, in zone: TimeZone) -> Result<Double, Problem> {
        // Offsets in force within a day either side: a zone changes its offset at most twice there.
        let offsets = Set([-86_400.0, -43_200, 0, 43_200, 86_400].map { zone.secondsFromGMT(for: Date(timeIntervalSince1970: local + $0)) })
        let instants = offsets.map { local - Double($0) }.filter { zone.secondsFromGMT(for: Date(timeIntervalSince1970: $0)) == Int(local - $0) }
        guard let first = instants.min() else { return .failure(Problem(message: "skipped")) }
        return .success(first)
    }

    /// The parts of `YYYY-MM-DD[T ]HH:MM[:SS[.fraction]][Z|±HH:MM|±HHMM]`, each as written.
    struct Fields {
        var year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0
        var fraction = 0.0
        /// Seconds east of UTC; nil: a local time.
        var offset: Int?

        init?(_ text: String) {
            var scanner = DigitScanner(Array(text.utf8))
            guard let year = scanner.number(4), scanner.take("-"), let month = scanner.number(2), scanner.take("-"), let day = scanner.number(2),
                  scanner.take("T") || scanner.take("t") || scanner.take(" "),
                  let hour = scanner.number(2), scanner.take(":"), let minute = scanner.number(2) else { return nil }
            (self.year, self.month, self.day, self.hour, self.minute) = (year, month, day, hour, minute)
            if scanner.take(":") {
                guard let second = scanner.number(2) else { return nil }
                self.second = second
                if scanner.take(".") || scanner.take(",") {
                    guard let digits = scanner.digits(), !digits.isEmpty, digits.count <= 9 else { return nil }
                    fraction = Double("0." + digits) ?? 0
                }
            }
            if scanner.take("Z") || scanner.take("z") {
                offset = 0
            } else if let sign = scanner.sign() {
                guard let hours = scanner.number(2) else { return nil }
                _ = scanner.take(":")
                let minutes = scanner.number(2) ?? 0
                guard hours <= 18, minutes <= 59 else { return nil }
                offset = sign * (hours * 3600 + minutes * 60)
            }
            guard scanner.atEnd else { return nil }
        }

        /// Why the fields name no time (a day the month does not have, an hour past 23…), or nil.
        var impossibility: String? {
            guard (1...12).contains(month) else { return "there is no month \(month)" }
            let length = month == 2 ? (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28) : [4, 6, 9, 11].contains(month) ? 30 : 31
            guard (1...length).contains(day) else {
                return "\(String(format: "%04d-%02d", year, month)) has \(length) days; name a day that exists"
            }
            guard hour <= 23 else { return "the hour is 00 to 23, not \(hour)" }
            guard minute <= 59 else { return "the minute is 00 to 59, not \(minute)" }
            guard second <= 59 else { return "the second is 00 to 59, not \(second)" }
            return nil
        }
    }

    /// Reads ASCII digits and signs off a byte array.
    struct DigitScanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func take(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(character.value) else { return false }
            index += 1
            return true
        }

        /// Exactly `count` digits as a number.
        mutating func number(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }

        /// The digits from here on, as text.
        mutating func digits() -> String? {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// +1 or -1 for `+` or `-`, nil otherwise.
        mutating func sign() -> Int? {
            if take("+") { return 1 }
            if take("-") { return -1 }
            return nil
        }
    }
}
