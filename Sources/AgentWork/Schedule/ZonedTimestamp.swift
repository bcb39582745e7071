import Foundation

/// A time as the people of a zone read it: ISO 8601 local time with its UTC offset,
/// e.g. `2026-03-29T03:00:00+02:00` (whole seconds; `+00:00` rather than `Z`).
public enum ZonedTimestamp {
    /// The local time of `date` in `zone`, with the offset in force then.
    public static func string(_ date: Date, in zone: TimeZone) -> String {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite, abs(seconds) < 1e13 else { return "\(date)" }
        let offset = Int64(zone.secondsFromGMT(for: date))
        let local = Int64(seconds) + offset
        let day = CronExpression.floorDivide(local, 86_400)
        let secondOfDay = Int(local - day * 86_400)
        let (year, month, dayOfMonth) = CivilDate.from(days: day)
        let magnitude = abs(offset)
        var text = String(format: "%04d-%02d-%02dT%02d:%02d:%02d", year, month, dayOfMonth,
                          secondOfDay / 3600, secondOfDay % 3600 / 60, secondOfDay % 60)
        text += (offset < 0 ? "-" : "+") + String(format: "%02d:%02d", Int(magnitude / 3600), Int(magnitude % 3600 / 60))
        // Local mean time offsets of the 19th century have seconds.
        if magnitude % 60 != 0 { text += String(format: ":%02d", Int(magnitude % 60)) }
        return text
    }
}
