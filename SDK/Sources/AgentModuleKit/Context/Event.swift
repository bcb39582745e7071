import Foundation

/// An event delivered to a process: its type, the process that emitted it, when, and its
/// payload (JSON by convention).
public struct Event: Sendable {
    /// The event type, e.g. `"trade"`.
    public let type: String
    /// The name of the process that emitted it.
    public let source: String
    /// When it was emitted.
    public let time: Date
    /// The payload bytes as emitted (see ``EventPayload``).
    public let payload: EventPayload

    /// An event as the runtime delivers it (or as a test makes one).
    public init(type: String, source: String, time: Date, payload: EventPayload) {
        self.type = type
        self.source = source
        self.time = time
        self.payload = payload
    }

    /// An event whose payload is the given bytes.
    public init(type: String, source: String, time: Date, payload: [UInt8]) {
        self.init(type: type, source: source, time: time, payload: EventPayload(payload))
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
