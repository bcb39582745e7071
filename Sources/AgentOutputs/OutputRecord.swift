import AgentBase
import Foundation
import JSONSchema

/// One event or message on its way to the agent's outputs.
///
/// The supervisor builds records on its event loop and hands them to `OutputHub.publish`;
/// rendering to JSON happens later, on the outputs' own threads.
public struct OutputRecord: Sendable {
    /// What a record carries.
    public enum Kind: String, Sendable, CaseIterable {
        /// An event routed by the supervisor (`type` and `payload`).
        case event
        /// A message sent by a process (`level` and `text`).
        case message
    }

    /// Whether this is an event or a message.
    public var kind: Kind
    /// When it happened, in nanoseconds since the Unix epoch.
    public var time: Int64
    /// The name of the process that emitted or sent it.
    public var source: String
    /// Events: the event type. Empty for messages.
    public var type: String
    /// Events: the payload, JSON by convention (rendered as a JSON string when it is not
    /// valid JSON). Empty for messages.
    public var payload: [UInt8]
    /// Messages: 0 debug, 1 info, 2 warning, 3 error, 4 critical. Zero for events.
    public var level: Int
    /// Messages: the text. Empty for events.
    public var text: String

    /// What the record costs a queue: its bytes and a record's fixed share.
    package var queuedBytes: Int { payload.count + text.utf8.count + source.utf8.count + type.utf8.count + 96 }

    /// An event record.
    public static func event(source: String, type: String, payload: [UInt8], time: Int64) -> OutputRecord {
        OutputRecord(kind: .event, time: time, source: source, type: type, payload: payload, level: 0, text: "")
    }

    /// A message record.
    public static func message(source: String, level: Int, text: String, time: Int64) -> OutputRecord {
        OutputRecord(kind: .message, time: time, source: source, type: "", payload: [], level: level, text: text)
    }

    /// The name of a message level: `debug`, `info`, `warning`, `error` or `critical`
    /// (levels outside 0…4 are clamped).
    public static func levelName(_ level: Int) -> String {
        switch level {
        case ..<1: "debug"
        case 1: "info"
        case 2: "warning"
        case 3: "error"
        default: "critical"
        }
    }

    /// The record as a JSON object:
    /// `{"kind":"event","time":"2026-11-23T03:00:00.123Z","source":"trades","type":"trade","payload":{…}}`
    /// or `{"kind":"message","time":…,"source":…,"level":"warning","text":…}`.
    public func jsonValue() -> JSONValue {
        let timeText = JSONValue.string(Self.timestamp(time))
        switch kind {
        case .event:
            let payloadValue = (try? JSONValue.parse(payload)) ?? .string(String(decoding: payload, as: UTF8.self))
            return .object([
                "kind": "event", "time": timeText, "source": .string(source), "type": .string(type),
                "payload": payloadValue,
            ])
        case .message:
            return .object([
                "kind": "message", "time": timeText, "source": .string(source),
                "level": .string(Self.levelName(level)), "text": .string(text),
            ])
        }
    }

    /// The record as one line of JSON, without the trailing newline.
    public func jsonLine() -> String {
        jsonValue().serialized()
    }

    /// `2026-11-23T03:00:00.123Z`: UTC, millisecond precision.
    package static func timestamp(_ nanoseconds: Int64) -> String { ConsoleOutput.timestamp(nanoseconds: nanoseconds, full: true) }
}
