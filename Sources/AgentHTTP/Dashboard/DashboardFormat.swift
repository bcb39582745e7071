import Foundation
import JSONSchema

/// How the dashboard writes numbers for people (the script writes them the same way).
enum DashboardFormat {
    static func duration(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite, seconds >= 0 else { return "" }
        let s = seconds >= 1e15 ? Int.max / 2 : Int(seconds)
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m \(s % 60)s" }
        if s < 86400 { return "\(s / 3600)h \(s % 3600 / 60)m" }
        return "\(s / 86400)d \(s % 86400 / 3600)h"
    }

    static func bytes(_ count: Double?) -> String {
        guard var value = count, value.isFinite else { return "" }
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(Int(value)) B" : String(format: "%.1f %@", value, units[unit])
    }

    static func cpu(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite else { return "" }
        return String(format: "%.2f s", seconds)
    }

    /// A store time (seconds since 1970) as `2026-11-24 02:31:05`.
    static func time(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite, abs(seconds) < 1e11 else { return "" }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }

    /// A number of an answer (nil when absent).
    static func number(_ value: JSONValue?) -> Double? { value?.numberValue?.doubleValue }

    /// `text` cut to about `limit` bytes (whole characters) for a list's cell, saying how long
    /// it was: 100 events of 64 KB of `<`, each escaped to four bytes, made a 16 MB page that
    /// held the HTTP front's loop for seconds (the API gives them whole).
    static func clipped(_ text: String, to limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var end = text.startIndex
        var kept = 0
        for index in text.indices {
            let size = text[index].utf8.count
            if kept + size > limit { break }
            kept += size
            end = text.index(after: index)
        }
        return String(text[..<end]) + "… (\(bytes(Double(text.utf8.count))) in all)"
    }

    /// Text for any scalar of an answer.
    static func text(_ value: JSONValue?) -> String {
        guard let value else { return "" }
        if let string = value.stringValue { return string }
        if let number = value.numberValue { return number.intValue.map(String.init) ?? "\(number.doubleValue)" }
        if let bool = value.boolValue { return bool ? "yes" : "no" }
        if value == .null { return "" }
        return value.serialized()
    }

    /// A value of a URL's query: everything but the unreserved characters (RFC 3986) encoded,
    /// so that a key's `&`, `=`, `+` or `#` stays part of it.
    static func queryValue(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    /// A name as one path segment of a URL.
    static func pathSegment(_ name: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#%")
        return name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
    }
}
