import AgentCommands
import AgentCore
import Foundation
import Hummingbird
import JSONSchema

extension DashboardRoutes {
    /// A process of `status` as the processes table shows it.
    static func row(_ process: JSONValue) -> [String: Any] {
        let name = process["name"]?.stringValue ?? "?"
        let state = process["state"]?.stringValue ?? "?"
        var detail = ""
        if let reason = process["reason"]?.stringValue { detail = reason }
        else if let retry = DashboardFormat.number(process["retry_in"]) { detail = "retry in \(DashboardFormat.duration(max(retry, 0)))" }
        else if let exit = process["last_exit"]?.stringValue, state != "running" { detail = exit }
        if process["paused"]?.boolValue == true { detail += detail.isEmpty ? "paused" : ", paused" }
        func count(_ key: String) -> String { DashboardFormat.text(process[key] ?? 0) }
        return [
            "name": name, "path": DashboardFormat.pathSegment(name), "type": DashboardFormat.text(process["type"]),
            "state": state, "detail": detail, "pid": DashboardFormat.text(process["pid"]),
            "uptime": state == "running" ? DashboardFormat.duration(DashboardFormat.number(process["state_seconds"])) : "",
            "restarts": count("restarts"),
            "cpu": DashboardFormat.cpu(DashboardFormat.number(process["cpu_seconds"])),
            "memory": DashboardFormat.bytes(DashboardFormat.number(process["rss_bytes"])),
            // What each count is, not "in / out": a datasource's events are emitted, not received.
            "emitted": count("events_emitted"), "received": count("events_delivered"), "dropped": count("events_dropped"),
        ]
    }

    func processesPage(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let status = await run(["command": "status"], context)
        var data: [String: Any] = ["back": "/"]
        if status["ok"]?.boolValue == true {
            data["processes"] = (status["processes"]?.arrayValue ?? []).map(Self.row)
            let store = status["store"]
            let storeText = store?["enabled"]?.boolValue == false ? "off"
                : store?["degraded"]?.stringValue.map { "degraded: \($0)" } ?? "\(DashboardFormat.text(store?["committed"] ?? 0)) events committed"
            data["agent"] = ["pid": DashboardFormat.text(status["pid"]), "uptime": DashboardFormat.duration(DashboardFormat.number(status["uptime"])), "store": storeText]
        } else {
            data["error"] = Self.problem(status)
        }
        return page("processes", title: "Processes", data: data, request: request, context: context)
    }

    func processPage(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let name = Self.pathParameter("name", context)
        let status = await run(["command": "status"], context)
        guard status["ok"]?.boolValue == true else {
            return page("process", title: name, nav: "processes", data: ["name": name, "error": Self.problem(status)], request: request, context: context, status: .serviceUnavailable)
        }
        guard let process = status["processes"]?.arrayValue?.first(where: { $0["name"]?.stringValue == name }) else {
            return page("process", title: name, nav: "processes", data: ["name": name, "error": "no process named \"\(name)\" in this agent"], request: request, context: context, status: .notFound)
        }
        let row = Self.row(process)
        var data: [String: Any] = ["name": name, "path": row["path"] ?? "", "state": row["state"] ?? "", "back": "/processes/" + (row["path"] as? String ?? "")]
        var facts: [[String: Any]] = [
            ["label": "Type", "value": "\(DashboardFormat.text(process["type"])) (\(DashboardFormat.text(process["module"])))"],
            ["label": "PID", "value": row["pid"] ?? "", "field": "pid"],
            ["label": "Uptime", "value": row["uptime"] ?? "", "field": "uptime"],
            ["label": "Restarts", "value": row["restarts"] ?? "", "field": "restarts"],
            ["label": "CPU", "value": row["cpu"] ?? "", "field": "cpu"],
            ["label": "Memory", "value": row["memory"] ?? "", "field": "memory"],
            ["label": "Events emitted", "value": row["emitted"] ?? "", "field": "emitted"],
            ["label": "Events received (queued for it)", "value": row["received"] ?? "", "field": "received"],
            ["label": "Events dropped (of those for it)", "value": row["dropped"] ?? "", "field": "dropped"],
            ["label": "Queued", "value": DashboardFormat.bytes(DashboardFormat.number(process["queued_bytes"]))],
        ]
        if let detail = row["detail"] as? String, !detail.isEmpty { facts.append(["label": "Detail", "value": detail]) }
        if let exit = process["last_exit"]?.stringValue { facts.append(["label": "Last exit", "value": exit]) }
        data["facts"] = facts

        let logs = await run(["command": "logs", "name": .string(name), "lines": 200], context)
        if logs["ok"]?.boolValue == true {
            let lines = logs["lines"]?.arrayValue ?? []
            var follow = ""
            if let route = CommandCatalog.named("logs"), route.method == "GET" {
                follow = route.path.replacingOccurrences(of: "{name}", with: DashboardFormat.pathSegment(name))
            }
            data["logs"] = [
                "url": follow, "next": DashboardFormat.text(logs["next"] ?? 0),
                "lines": lines.map { ["time": DashboardFormat.text($0["time"]), "stream": DashboardFormat.text($0["stream"]), "text": TerminalText.shown(DashboardFormat.text($0["text"]))] },
            ] as [String: Any]
            if lines.isEmpty { data["logsNote"] = "No lines yet." }
        } else {
            data["logsNote"] = "No log: " + Self.problem(logs)
        }

        let history = await run(["command": "history", "process": .string(name), "limit": 50], context)
        data["history"] = (history["entries"]?.arrayValue ?? []).reversed().map { entry in
            ["time": DashboardFormat.text(entry["time"]), "event": DashboardFormat.text(entry["event"]), "detail": DashboardFormat.text(entry["detail"])]
        }
        data["historyNote"] = history["ok"]?.boolValue == true ? "No history yet." : Self.problem(history)

        let settings = await run(["command": "settings_get"], context)
        // A replica's settings are its process's.
        if let value = settings["settings"]?["processes"]?[process["replica_of"]?.stringValue ?? name] {
            data["settings"] = value.serialized(pretty: true)
        } else {
            data["settingsNote"] = settings["ok"]?.boolValue == true ? "Not in the settings file." : Self.problem(settings)
        }
        return page("process", title: name, nav: "processes", data: data, request: request, context: context)
    }

    /// A path parameter unescaped (the router leaves `NAME%232` for a replica's `NAME#2`).
    static func pathParameter(_ key: String, _ context: AgentRequestContext) -> String {
        let raw = context.parameters.get(key) ?? ""
        return raw.removingPercentEncoding ?? raw
    }

    /// `POST /processes/NAME` with `action` start, stop or restart: the `process` command.
    func processAction(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let form: FormBody
        switch await mutatingForm(request, context) {
        case .success(let found): form = found
        case .failure(let refusal): return refused(refusal.reason, request: request, context: context, status: refusal.status)
        }
        let name = Self.pathParameter("name", context)
        let action = form["action"] ?? ""
        guard ["start", "stop", "restart"].contains(action) else {
            return refused("unknown action \"\(action)\"; expected start, stop or restart", request: request, context: context, status: .badRequest)
        }
        let answer = await run(["command": "process", "action": .string(action), "name": .string(name)], context)
        let ok = answer["ok"]?.boolValue == true
        let message = ok ? "\(action) \(name): ok, now \(answer["process"]?["state"]?.stringValue ?? "?")" : "\(action) \(name): \(Self.problem(answer))"
        return Self.redirect(to: form["back"] ?? "/", message: message, failed: !ok)
    }
}
