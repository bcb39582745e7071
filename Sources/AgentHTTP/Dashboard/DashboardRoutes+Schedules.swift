import Foundation
import Hummingbird
import JSONSchema

extension DashboardRoutes {
    /// `GET /schedules`: `schedule_list`, and with `?name=NAME` that schedule's history
    /// (`schedule_history`, the newest 50 lines).
    func schedulesPage(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let list = await run(["command": "schedule_list"], context)
        var data: [String: Any] = [:]
        if list["ok"]?.boolValue == true {
            data["schedules"] = (list["schedules"]?.arrayValue ?? []).map { schedule -> [String: Any] in
                let name = DashboardFormat.text(schedule["name"])
                var timing = ""
                if let cron = schedule["cron"]?.stringValue { timing = "cron \(cron) (\(DashboardFormat.text(schedule["timezone"])))" }
                if let every = schedule["every"] { timing = "every \(DashboardFormat.text(every)) s" }
                if let at = schedule["at"]?.stringValue { timing = "at \(at)" }
                let state = schedule["enabled"] == false ? "disabled" : schedule["paused"] == true ? "paused" : "active"
                // A schedule runs a task or starts a workflow: its runs' pages differ.
                let workflow = schedule["workflow"]?.stringValue
                return ["name": name, "path": DashboardFormat.pathSegment(name), "task": workflow.map { "workflow " + $0 } ?? DashboardFormat.text(schedule["task"]),
                        "runBase": workflow == nil ? "/runs/" : "/workflow-runs/", "timing": timing,
                        "state": state, "paused": schedule["paused"] == true, "next": DashboardFormat.text(schedule["next_fire"]),
                        "last": DashboardFormat.text(schedule["last_fire"]), "result": DashboardFormat.text(schedule["last_result"]),
                        "run": DashboardFormat.text(schedule["last_run"]), "runPath": DashboardFormat.pathSegment(DashboardFormat.text(schedule["last_run"])),
                        "missed": DashboardFormat.text(schedule["missed"] ?? "-"), "skipped": DashboardFormat.text(schedule["skipped"] ?? "-")]
            }
            // In a fleet: who fires them (another agent's counts are not known here: "-").
            if let leads = list["leads"]?.boolValue {
                data["fleetLeader"] = leads ? "this agent leads (fires) them"
                    : list["leader"]?.stringValue.map { "agent \($0) leads (fires) them" } ?? "no agent leads them now"
            }
        } else {
            data["error"] = Self.problem(list)
        }
        if let name = request.uri.queryParameters["name"].map(String.init), !name.isEmpty {
            let history = await run(["command": "schedule_history", "name": .string(name), "limit": 50], context)
            data["selected"] = name
            let startsWorkflow = (list["schedules"]?.arrayValue ?? []).contains { $0["name"]?.stringValue == name && $0["workflow"] != nil }
            data["runBase"] = startsWorkflow ? "/workflow-runs/" : "/runs/"
            if history["ok"]?.boolValue == true {
                data["history"] = (history["history"]?.arrayValue ?? []).map { line -> [String: Any] in
                    let id = DashboardFormat.text(line["run_id"])
                    return ["planned": line["planned"]?.stringValue ?? "(run now)", "actual": DashboardFormat.text(line["actual"]),
                            "outcome": DashboardFormat.text(line["outcome"]), "run": id, "runPath": DashboardFormat.pathSegment(id),
                            "result": DashboardFormat.text(line["result"]), "count": DashboardFormat.text(line["count"] ?? 1),
                            "reason": DashboardFormat.text(line["reason"])]
                }
            } else {
                data["error"] = Self.problem(history)
            }
        }
        return page("schedules", title: "Schedules", data: data, request: request, context: context)
    }

    /// `POST /schedules/NAME` with `action` pause, resume or run: `schedule_pause`, `schedule_resume`, `schedule_run`.
    func scheduleAction(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let form: FormBody
        switch await mutatingForm(request, context) {
        case .success(let found): form = found
        case .failure(let refusal): return refused(refusal.reason, request: request, context: context, status: refusal.status)
        }
        let name = context.parameters.get("name") ?? ""
        let action = form["action"] ?? ""
        guard ["pause", "resume", "run"].contains(action) else {
            return refused("unknown action \"\(action)\"; expected pause, resume or run", request: request, context: context, status: .badRequest)
        }
        let answer = await run(["command": .string("schedule_" + action), "name": .string(name)], context)
        guard answer["ok"]?.boolValue == true else {
            return Self.redirect(to: "/schedules", message: "\(action) \(name): \(Self.problem(answer))", failed: true)
        }
        if action == "run", let id = answer["workflow_run"]?["id"]?.stringValue {
            return Self.redirect(to: "/workflow-runs/" + DashboardFormat.pathSegment(id), message: "workflow run \(id) of schedule \(name) started", failed: false)
        }
        if action == "run", let id = answer["run"]?["id"]?.stringValue {
            return Self.redirect(to: "/runs/" + DashboardFormat.pathSegment(id), message: "run \(id) of schedule \(name) queued", failed: false)
        }
        return Self.redirect(to: "/schedules?name=" + DashboardFormat.pathSegment(name), message: "\(name) \(action == "pause" ? "paused" : "resumed")", failed: false)
    }
}
