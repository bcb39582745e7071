import AgentBase
import AgentLoop
import AgentStore
import Foundation
import JSONSchema

/// The commands that read the store (`events`, `history`): answered from a read-only
/// connection on the caller's thread, never on the supervisor's loop, with the same reader
/// `agent-control events` and `history` use.
package enum StoreCommands {
    /// Answers `events` or `history` off the loop (a read may take a while); `respond` is
    /// called on the loop, through `inbox`.
    package static func answer(_ request: JSONValue, storePath: String?, inbox: LoopInbox, respond: @escaping (JSONValue) -> Void) {
        let reply = LoopBound(value: respond)
        Task.detached {
            let answer = CommandCenter.normalized(execute(request, storePath: storePath))
            inbox.post { reply.value(answer) }
        }
    }

    package static func execute(_ request: JSONValue, storePath: String?) -> JSONValue {
        guard let storePath else {
            return ["ok": false, "code": "unavailable", "error": "the store is off (\"store\": {\"enabled\": false}), so there are no events or history to read"]
        }
        do {
            let reader = try StoreReader(path: storePath)
            let limit = min(max(request["limit"]?.numberValue?.intValue ?? 100, 1), 10_000)
            switch request["command"]?.stringValue {
            case "events"?:
                var since: Double?
                if let text = request["since"]?.stringValue {
                    guard let parsed = TimeSpec.since(text) else {
                        return ["ok": false, "code": "invalid", "pointer": "/since",
                                "error": .string("\"since\" must be a duration like 30s, 10m, 2h, 1d or an ISO 8601 time; found \"\(text)\"")]
                    }
                    since = parsed
                }
                let after = Int64(saturating: request["after"]?.numberValue?.doubleValue ?? 0)
                let types = request["type"]?.stringValue.map { [$0] } ?? []
                let sources = request["source"]?.stringValue.map { [$0] } ?? []
                // The first page is the newest events; following pages continue after `after`.
                let events = try reader.events(types: types, sources: sources, since: since, afterID: after, limit: limit, newest: after == 0)
                let next = events.last?.id ?? after
                return ["ok": true, "events": .array(events.map(\.json)), "next": .number(JSONNumber(Int(next)))]
            case "history"?:
                let entries = try reader.history(process: request["process"]?.stringValue, limit: limit)
                return ["ok": true, "entries": .array(entries.map(\.json))]
            default:
                return ["ok": false, "code": "invalid", "error": "not a store command"]
            }
        } catch {
            return ["ok": false, "code": "unavailable", "error": .string("\(error)")]
        }
    }
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
