import Foundation
import Hummingbird
import JSONSchema

extension DashboardRoutes {
    /// Bytes of an event's payload the events page shows (the whole event: `GET /api/events`).
    static let listedPayloadBytes = 2_000

    /// The newest events (filtered by `type`, `source` and `run`), newest first; the script then
    /// follows with `GET /api/events?after=`.
    func eventsPage(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let query = request.uri.queryParameters
        let type = query["type"].map(String.init)?.trimmingCharacters(in: .whitespaces) ?? ""
        let source = query["source"].map(String.init)?.trimmingCharacters(in: .whitespaces) ?? ""
        let runID = query["run"].map(String.init)?.trimmingCharacters(in: .whitespaces) ?? ""
        var command: JSONObject = ["command": "events", "limit": 100]
        if !type.isEmpty { command["type"] = .string(type) }
        if !source.isEmpty { command["source"] = .string(source) }
        if !runID.isEmpty { command["run"] = .string(runID) }
        let answer = await run(command, context)
        var data: [String: Any] = ["type": type, "source": source, "run": runID, "filtered": !type.isEmpty || !source.isEmpty || !runID.isEmpty]
        if answer["ok"]?.boolValue == true {
            let events = answer["events"]?.arrayValue ?? []
            data["events"] = events.reversed().map { event in
                ["id": DashboardFormat.text(event["id"]), "time": DashboardFormat.text(event["time"]), "type": DashboardFormat.text(event["type"]),
                 "source": DashboardFormat.text(event["source"]), "payload": DashboardFormat.clipped(event["payload"]?.serialized() ?? "", to: Self.listedPayloadBytes)]
            }
            // Following continues after the newest event shown.
            let newest = events.compactMap { $0["id"]?.numberValue?.intValue }.max() ?? 0
            data["next"] = String(max(newest, answer["next"]?.numberValue?.intValue ?? 0))
        } else {
            data["error"] = Self.problem(answer)
            data["next"] = "0"
        }
        return page("events", title: "Events", data: data, request: request, context: context)
    }
}
