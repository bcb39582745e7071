import Foundation
import JSONSchema

/// A request member that says "since when": seconds back from now (a number, or a number as
/// text, as a query string carries it), a duration (`30s`, `10m`, `2h`, `1d`) or an ISO 8601
/// time. Its schema type is `["string", "number"]`.
public enum TimeSince: Codable, Sendable, Equatable, JSONTypes {
    case seconds(Double)
    case text(String)

    public static let jsonTypes: JSONValue = ["string", "number"]

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self = .text(text)
            return
        }
        do {
            self = .seconds(try container.decode(Double.self))
        } catch DecodingError.typeMismatch {
            throw DecodingError.typeMismatch(TimeSince.self, .init(codingPath: decoder.codingPath, debugDescription: "expected seconds (a number) or a time (a string)"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .seconds(let seconds): try container.encode(seconds)
        case .text(let text): try container.encode(text)
        }
    }

    /// The time it names (seconds since 1970), or nil when it names none (a negative number,
    /// text that is no duration or time).
    public func time(now: Double = Date().timeIntervalSince1970) -> Double? {
        switch self {
        case .seconds(let seconds): return seconds >= 0 && seconds.isFinite ? now - seconds : nil
        case .text(let text):
            if let number = Double(text), number >= 0, number.isFinite { return now - number }
            return TimeSpec.since(text, now: now)
        }
    }

    /// As the request had it, for messages.
    public var json: JSONValue {
        switch self {
        case .seconds(let seconds): .number(JSONNumber(seconds))
        case .text(let text): .string(text)
        }
    }
}

/// A request member type whose JSON Schema `type` is not one JSON type (``TimeSince``): the
/// agreement test compares the schema's `type` with ``jsonTypes``.
public protocol JSONTypes {
    static var jsonTypes: JSONValue { get }
}
