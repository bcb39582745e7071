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
    /// more than 100 years back, text that is no duration or time).
    public func time(now: Double = Date().timeIntervalSince1970) -> Double? {
        switch self {
        case .seconds(let seconds): return Self.secondsBack(seconds, now: now)
        case .text(let text):
            if let number = Double(text) { return Self.secondsBack(number, now: now) }
            return TimeSpec.since(text, now: now)
        }
    }

    /// What the member takes, for refusals.
    public static let form = "seconds back from now (a number from 0 to \(Int(SettingsBounds.longestRetention))), \(TimeSpec.sinceForm)"

    private static func secondsBack(_ seconds: Double, now: Double) -> Double? {
        seconds >= 0 && seconds <= SettingsBounds.longestRetention ? now - seconds : nil
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
