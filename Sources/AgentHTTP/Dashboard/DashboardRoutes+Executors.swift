import AgentWork
import Foundation
import Hummingbird
import JSONSchema

extension DashboardRoutes {
    /// `GET /executors`: `executor_list`, and the runs waiting for the logged-in person
    /// (`task_assignments` with `user`).
    func executorsPage(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let list = await run(["command": "executor_list"], context)
        var data: [String: Any] = [:]
        if list["ok"]?.boolValue == true {
            data["executors"] = (list["executors"]?.arrayValue ?? []).map { executor -> [String: Any] in
                let name = DashboardFormat.text(executor["name"])
                let labels = (executor["labels"]?.objectValue ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.stringValue ?? "")" }
                return ["name": name, "path": DashboardFormat.pathSegment(name), "state": DashboardFormat.text(executor["state"]),
                        "running": DashboardFormat.text(executor["running"]), "max": DashboardFormat.text(executor["max_concurrent"]),
                        "tasks": (executor["tasks"]?.objectValue ?? [:]).keys.sorted().joined(separator: ", "),
                        "labels": labels.joined(separator: ", "), "user": executor["user"]?.stringValue ?? executor["role"]?.stringValue.map { "any \($0) user" } ?? "",
                        "assigned": DashboardFormat.text(executor["assigned"]), "draining": executor["state"] == "draining"]
            }
            let strategies = list["strategies"] ?? .null
            data["strategy"] = DashboardFormat.text(strategies["agent"])
            data["taskStrategies"] = (strategies["tasks"]?.objectValue ?? [:]).sorted { $0.key < $1.key }.map { ["task": $0.key, "strategy": $0.value.stringValue ?? ""] }
            let queued = list["statistics"]?["queued_by_priority"]?.objectValue ?? [:]
            data["queued"] = TaskRun.Priority.allCases.reversed().map { "\($0.rawValue) \(queued[$0.rawValue]?.numberValue?.intValue ?? 0)" }.joined(separator: ", ")
        } else {
            data["error"] = Self.problem(list)
        }
        if let user = context.identity?.name {
            let mine = await run(["command": "task_assignments", "user": .string(user)], context)
            data["mine"] = (mine["runs"]?.arrayValue ?? []).filter { $0["status"] == "running" }.map { run -> [String: Any] in
                let id = DashboardFormat.text(run["id"])
                return ["id": id, "path": DashboardFormat.pathSegment(id), "task": DashboardFormat.text(run["task"]),
                        "priority": DashboardFormat.text(run["priority"]), "input": DashboardFormat.clipped((run["input"] ?? .object([:])).serialized(), to: Self.listedPayloadBytes),
                        "queued": DashboardFormat.text(run["queued_at"])]
            }
        }
        return page("executors", title: "Executors", data: data, request: request, context: context)
    }

    /// `POST /executors/NAME` with `action` drain or resume (admins).
    func executorAction(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let form: FormBody
        switch await mutatingForm(request, context) {
        case .success(let found): form = found
        case .failure(let refusal): return refused(refusal.reason, request: request, context: context, status: refusal.status)
        }
        // A replica's name has a "#", which the page sends as %23.
        let name = Self.pathParameter("name", context)
        let action = form["action"] ?? ""
        guard ["drain", "resume"].contains(action) else {
            return refused("unknown action \"\(action)\"; expected drain or resume", request: request, context: context, status: .badRequest)
        }
        let answer = await run(["command": .string("executor_" + action), "name": .string(name)], context)
        guard answer["ok"]?.boolValue == true else {
            return Self.redirect(to: "/executors", message: "\(action) \(name): \(Self.problem(answer))", failed: true)
        }
        return Self.redirect(to: "/executors", message: "\(name) \(action == "drain" ? "draining" : "resumed")", failed: false)
    }

    /// `POST /executors/runs/ID` with `action` complete (and `output`) or fail (and `error`):
    /// a person's run (any role; the command layer checks it waits for this user).
    func personRunAction(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let form: FormBody
        switch await mutatingForm(request, context) {
        case .success(let found): form = found
        case .failure(let refusal): return refused(refusal.reason, request: request, context: context, status: refusal.status)
        }
        let id = Self.pathParameter("id", context)
        var command: JSONObject = ["id": .string(id)]
        switch form["action"] ?? "" {
        case "complete":
            command["command"] = "task_complete"
            let text = (form["output"] ?? "").trimmingCharacters(in: .whitespaces)
            if !text.isEmpty {
                guard let output = try? JSONValue.parse(Data(text.utf8)) else {
                    return Self.redirect(to: "/executors", message: "complete \(id): the output is not valid JSON", failed: true)
                }
                command["output"] = output
            }
        case "fail":
            command["command"] = "task_fail"
            command["error"] = .string(form["error"] ?? "")
        case let other:
            return refused("unknown action \"\(other)\"; expected complete or fail", request: request, context: context, status: .badRequest)
        }
        let answer = await run(command, context)
        guard answer["ok"]?.boolValue == true else {
            return Self.redirect(to: "/executors", message: "run \(id): \(Self.problem(answer))", failed: true)
        }
        return Self.redirect(to: "/executors", message: "run \(id) \(answer["run"]?["status"]?.stringValue ?? "done")", failed: false)
    }
}
