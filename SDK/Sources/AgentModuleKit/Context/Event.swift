import Foundation

/// An event delivered to a process: its type, the process that emitted it, when, and its
/// payload (JSON by convention).
public struct Event: Sendable {
    /// The event type, e.g. `"trade"`.
    public let type: String
    /// The name of the process that emitted it.
    public let source: String
    /// When it was emitted: nanoseconds since 1970 (UTC), exactly as the host stamped it.
    /// A `Date` keeps a quarter of a microsecond at today's dates; this keeps every stamp.
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

    /// An event made by a test or an adapter: its time as a `Date`, kept as exactly as the
    /// `Date` holds it (a time beyond the years 1678–2261 becomes the nearest of them).
    public init(type: String, source: String, time: Date, payload: EventPayload) {
        self.init(type: type, source: source, timeNanoseconds: Self.nanoseconds(time), payload: payload)
    }

    /// An event whose payload is the given bytes.
    public init(type: String, source: String, time: Date, payload: [UInt8]) {
        self.init(type: type, source: source, time: time, payload: EventPayload(payload))
    }

    /// Nanoseconds since 1970 as a `Date`: shifted to Foundation's reference date in integers
    /// (exact) and scaled by a multiplication (a division was a quarter of building a batch).
    @inline(__always)
    static func date(nanoseconds: Int64) -> Date {
        let (shifted, overflow) = nanoseconds.subtractingReportingOverflow(978_307_200_000_000_000)
        // A stamp within 10^18 ns of Int64.min (no host gives one): the distant past instead.
        return overflow ? .distantPast : Date(timeIntervalSinceReferenceDate: Double(shifted) * 1e-9)
    }

    /// A `Date` as nanoseconds since 1970, rounded: whole seconds and their fraction apart, so
    /// that no more is lost than the `Date` itself lost. Saturated at Int64's range (NaN: 0).
    static func nanoseconds(_ date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970
        guard !seconds.isNaN else { return 0 }
        // Int64's range is ±9,223,372,036.85 s: past ±9.2e9 s saturate (and stay finite below).
        guard abs(seconds) < 9.2e9 else { return seconds < 0 ? .min : .max }
        let whole = seconds.rounded(.down)
        let fraction = ((seconds - whole) * 1e9).rounded()
        return Int64(whole) * 1_000_000_000 + Int64(fraction)
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
