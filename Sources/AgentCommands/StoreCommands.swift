import AgentBase
import AgentLoop
import AgentStore
import Foundation
import JSONSchema

/// The commands that read the store (``EventsCommand``, ``HistoryCommand``), by name.
package enum StoreCommands {
    /// Every typed store read.
    package static let all: [any StoreReadCommand.Type] = [EventsCommand.self, HistoryCommand.self]

    /// Answers `events` or `history` (checked by the registry) on the caller's thread.
    package static func execute(_ request: JSONValue, storePath: String?) -> JSONValue {
        guard let command = all.first(where: { $0.name == request["command"]?.stringValue }) else {
            return CommandError.invalid("not a store command").json
        }
        return command.execute(request, storePath: storePath)
    }

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
