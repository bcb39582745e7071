import AgentBase
import AgentLoop
import AgentStore
import Foundation
import JSONSchema

/// The commands that read the run history and the events (``EventsCommand``,
/// ``HistoryCommand``; ``ChatHistoryCommand``, a store read too, is among the chat commands).
package enum StoreCommands {
    /// The history's and the events' store reads.
    package static let all: [any StoreReadCommand.Type] = [EventsCommand.self, HistoryCommand.self]

    /// A request's `limit`: 100 when absent, within 1...10,000.
    static func limit(_ given: Int?) -> Int { min(max(given ?? 100, 1), 10_000) }
}

extension HistoryEntry {
    /// The entry as `agent-control history --json` and the API show it.
    public var json: JSONValue {
        var object: JSONObject = [
            "time": .string(StoreReader.StoredEvent.iso(time)), "process": .string(process), "event": .string(event), "detail": .string(detail),
        ]
        if let pid { object["pid"] = .number(JSONNumber(Int(pid))) }
        if let exitCode { object["exit_code"] = .number(JSONNumber(Int(exitCode))) }
        if let signal { object["signal"] = .string(signal) }
        return .object(object)
    }
}
