import Foundation
import Hummingbird
import JSONSchema

extension DashboardRoutes {
    /// `GET /fleet`: `fleet_status` — every agent of the fleet (host, version, processes,
    /// executors, runs, load, last heartbeat, lost), the database's condition, and the events
    /// this agent publishes and receives. Kept current by polling `GET /api/fleet`.
    func fleetPage(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let status = await run(["command": "fleet_status"], context)
        var data: [String: Any] = [:]
        if status["ok"]?.boolValue == true {
            data["self"] = DashboardFormat.text(status["agent_id"])
            data["database"] = DashboardFormat.text(status["database"])
            // Absent when well (an empty string is "true" to a Mustache section).
            if let degraded = status["degraded"]?.stringValue { data["degraded"] = degraded }
            data["backlog"] = DashboardFormat.text(status["backlog"] ?? 0)
            data["agents"] = (status["agents"]?.arrayValue ?? []).map { Self.fleetRow($0, this: status["agent_id"]?.stringValue) }
            let events = status["events"] ?? .null
            let published = (events["published_types"]?.arrayValue ?? []).compactMap(\.stringValue)
            let subscribed = (events["subscribed_types"]?.arrayValue ?? []).compactMap(\.stringValue)
            data["publishes"] = published.isEmpty ? "nothing" : published.joined(separator: ", ")
                + " (\(DashboardFormat.text(events["published"] ?? 0)) written, \(DashboardFormat.text(events["backlog"] ?? 0)) waiting, \(DashboardFormat.text(events["dropped"] ?? 0)) dropped)"
            data["receives"] = subscribed.isEmpty ? "nothing" : subscribed.joined(separator: ", ")
                + " (\(DashboardFormat.text(events["received"] ?? 0)) received)"
        } else {
            data["error"] = Self.problem(status)
        }
        return page("fleet", title: "Fleet", data: data, request: request, context: context)
    }

    /// One agent's row (the script renders the same cells from `GET /api/fleet`).
    static func fleetRow(_ agent: JSONValue, this: String?) -> [String: Any] {
        let id = DashboardFormat.text(agent["agent_id"])
        let processes = (agent["processes"]?.objectValue ?? [:]).sorted { $0.key < $1.key }
        let running = processes.filter { $0.value.stringValue == "running" }.count
        let executors = (agent["executors"]?.arrayValue ?? []).map { executor -> String in
            let draining = executor["draining"] == true ? " draining" : ""
            return "\(DashboardFormat.text(executor["name"])) \(DashboardFormat.text(executor["running"]))/\(DashboardFormat.text(executor["max_concurrent"]))\(draining)"
        }
        let silence = agent["seconds_since_heartbeat"]?.numberValue?.doubleValue ?? 0
        return ["id": id, "this": id == this, "host": DashboardFormat.text(agent["host"]), "version": DashboardFormat.text(agent["version"]),
                "state": DashboardFormat.text(agent["state"]),
                "processes": "\(running)/\(processes.count) running",
                "processList": processes.map { "\($0.key): \($0.value.stringValue ?? "")" }.joined(separator: ", "),
                "executors": executors.isEmpty ? "implicit" : executors.joined(separator: ", "),
                "runs": DashboardFormat.text(agent["running_runs"] ?? 0), "load": String(format: "%.2f", agent["load"]?.numberValue?.doubleValue ?? 0),
                "heartbeat": DashboardFormat.text(agent["last_heartbeat"]), "ago": String(format: "%.1f s ago", silence)]
    }
}
