import Foundation

/// An event delivered to a process: its type, the process that emitted it, when, and its
/// payload (JSON by convention).
public struct Event: Sendable {
    /// The event type, e.g. `"trade"`.
    public let type: String
    /// The name of the process that emitted it.
    public let source: String
    /// When it was emitted: nanoseconds since 1970 (UTC), exactly as the host stamped it.
    /// A `Date` holds today's dates to about 0.12 µs; this holds every stamp exactly.
    public let timeNanoseconds: Int64
    /// The payload bytes as emitted (see ``EventPayload``).
    public let payload: EventPayload

    /// When it was emitted, as a `Date` (made from ``timeNanoseconds`` when read).
    public var time: Date { Self.date(nanoseconds: timeNanoseconds) }

    /// An event as the runtime delivers it: its emission time in nanoseconds since 1970.
    public init(type: String, source: String, timeNanoseconds: Int64, payload: EventPayload) {
        self.type = type
        self.source = source
        self.timeNanoseconds = timeNanoseconds
        self.payload = payload
    }

    /// An event made by a test or an adapter: its time as a `Date`, kept to the nanosecond
    /// (`time` gives the same `Date` back; a time beyond the years 1677–2262, which Int64
    /// nanoseconds hold, becomes the nearest end of them).
    public init(type: String, source: String, time: Date, payload: EventPayload) {
        self.init(type: type, source: source, timeNanoseconds: Self.nanoseconds(time), payload: payload)
    }

    /// An event whose payload is the given bytes.
    public init(type: String, source: String, time: Date, payload: [UInt8]) {
        self.init(type: type, source: source, time: time, payload: EventPayload(payload))
    }

    /// Seconds from 1970 to Foundation's reference date (2001), which a `Date` counts from.
    private static let referenceOffset: Int64 = 978_307_200

    /// Nanoseconds since 1970 as a `Date`: whole seconds since the reference date and their
    /// fraction apart, so that a stamp made from a `Date` gives that `Date` back, and every
    /// stamp an Int64 holds (1677–2262) its own day.
    static func date(nanoseconds: Int64) -> Date {
        var (seconds, fraction) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        // Rounded down, so that the fraction is never negative.
        if fraction < 0 {
            seconds -= 1
            fraction += 1_000_000_000
        }
        return Date(timeIntervalSinceReferenceDate: Double(seconds - referenceOffset) + Double(fraction) / 1e9)
    }

    /// A `Date` as nanoseconds since 1970, rounded; whole seconds and their fraction apart (in
    /// the reference date's count, as the `Date` keeps them), so that nothing is lost that the
    /// `Date` held to the nanosecond. Saturated at Int64's range (NaN: 0).
    static func nanoseconds(_ date: Date) -> Int64 {
        let sinceReference = date.timeIntervalSinceReferenceDate
        guard !sinceReference.isNaN else { return 0 }
        let whole = sinceReference.rounded(.down)
        // Exact below 2^53; a date that far out saturates below anyway.
        let seconds = whole + Double(referenceOffset)
        // Int64's nanoseconds reach 9,223,372,036 s either side of 1970.
        guard seconds >= -9_223_372_036, seconds < 9_223_372_036 else { return seconds < 0 ? .min : .max }
        let fraction = ((sinceReference - whole) * 1e9).rounded()
        return Int64(seconds) * 1_000_000_000 + Int64(fraction)
    }

    /// Decodes the JSON payload.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(payload))
    }

    /// The payload as text (UTF-8).
    public var payloadText: String { String(decoding: payload, as: UTF8.self) }

    /// For a `query:<name>` event: the query's name, window and rows (column → value).
    public func queryResult() -> QueryResult? {
        guard type.hasPrefix("query:"),
              let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] else { return nil }
        return QueryResult(name: String(type.dropFirst("query:".count)),
                           since: object["since"] as? Double ?? 0, until: object["until"] as? Double ?? 0,
                           rows: object["rows"] as? [[String: Any]] ?? [])
    }
}

/// The rows of one run of a ``PeriodicQuery``.
public struct QueryResult: @unchecked Sendable {
    /// The query's name (the `name` of its ``PeriodicQuery``).
    public var name: String
    /// The window, in seconds since the epoch.
    public var since: Double
    /// The window's end, in seconds since the epoch.
    public var until: Double
    /// One dictionary per row: column name → String, Int, Double or NSNull.
    public var rows: [[String: Any]]
}
