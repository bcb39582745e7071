import AgentWork
import Foundation
import Hummingbird
import JSONSchema

extension DashboardRoutes {
    /// A run of `task_runs` as the runs table shows it.
    static func runRow(_ run: JSONValue) -> [String: Any] {
        let id = DashboardFormat.text(run["id"])
        return [
            "id": id, "path": DashboardFormat.pathSegment(id), "task": DashboardFormat.text(run["task"]),
            "status": DashboardFormat.text(run["status"]), "attempt": DashboardFormat.text(run["attempt"] ?? 1),
            "priority": DashboardFormat.text(run["priority"]), "queued": DashboardFormat.text(run["queued_at"]),
            "took": DashboardFormat.number(run["execution_time"]).map { String(format: "%.3f s", $0) } ?? "",
            "error": RunListing.errorPreview(run) ?? "",
        ]
    }

    /// `GET /tasks`: `task_list` and the newest 50 runs of `task_runs`.
    func tasksPage(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let list = await run(["command": "task_list"], context)
        var data: [String: Any] = [:]
        if list["ok"]?.boolValue == true {
            data["tasks"] = (list["tasks"]?.arrayValue ?? []).map { task -> [String: Any] in
                let name = DashboardFormat.text(task["name"])
                return ["name": name, "path": DashboardFormat.pathSegment(name), "type": DashboardFormat.text(task["type"]),
                        "description": DashboardFormat.text(task["description"]),
                        "queued": DashboardFormat.text(task["queued"] ?? 0), "running": DashboardFormat.text(task["running"] ?? 0)]
            }
        } else {
            data["error"] = Self.problem(list)
        }
        let runs = await run(["command": "task_runs", "limit": 50], context)
        data["runs"] = (runs["runs"]?.arrayValue ?? []).map(Self.runRow)
        if let note = runs["note"]?.stringValue { data["note"] = note }
        if runs["ok"]?.boolValue != true, data["error"] == nil { data["error"] = Self.problem(runs) }
        return page("tasks", title: "Tasks", data: data, request: request, context: context)
    }

    /// `GET /runs/ID`: `task_show`.
    func runPage(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let id = context.parameters.get("id") ?? ""
        let answer = await run(["command": "task_show", "id": .string(id)], context)
        guard answer["ok"]?.boolValue == true, let run = answer["run"] else {
            let status: HTTPResponse.Status = answer["code"]?.stringValue == "not_found" ? .notFound : .serviceUnavailable
            return page("run", title: "Run \(id)", nav: "tasks", data: ["id": id, "error": Self.problem(answer)], request: request, context: context, status: status)
        }
        let row = Self.runRow(run)
        let status = row["status"] as? String ?? ""
        let finished = TaskRun.Status(rawValue: status)?.isFinished ?? false
        var facts: [[String: Any]] = [
            ["label": "Task", "value": row["task"] ?? ""], ["label": "Attempt", "value": row["attempt"] ?? ""],
            ["label": "Priority", "value": row["priority"] ?? ""], ["label": "Requested by", "value": DashboardFormat.text(run["requested_by"])],
            ["label": "Queued", "value": row["queued"] ?? ""],
        ]
        for (label, key) in [("Not before", "not_before"), ("Next attempt", "next_attempt_at"), ("Started", "started_at"), ("Ended", "ended_at"),
                             ("Interruptions", "interruptions"), ("Exit status", "exit_code"), ("Signal", "signal"), ("Rerun of", "rerun_of")] {
            if let value = run[key] { facts.append(["label": label, "value": DashboardFormat.text(value)]) }
        }
        if let took = row["took"] as? String, !took.isEmpty { facts.append(["label": "Took", "value": took]) }
        let attempts = answer["attempts"]?.arrayValue ?? []
        facts += Self.ranBy(run, last: attempts.last)
        var data: [String: Any] = [
            "id": id, "path": DashboardFormat.pathSegment(id), "status": status, "finished": finished, "found": true, "facts": facts,
            "input": (run["input"] ?? .object([:])).serialized(pretty: true), "attempts": attempts.map(Self.attemptRow),
        ]
        if let missing = answer["attempts_not_kept"] { data["attemptsNotKept"] = DashboardFormat.text(missing) }
        if let output = run["output"] { data["output"] = output.stringValue ?? output.serialized(pretty: true) }
        if let error = run["error"]?.stringValue { data["failure"] = error }
        if let stderr = run["stderr_tail"]?.stringValue, !stderr.isEmpty { data["stderr"] = stderr }
        return page("run", title: "Run \(id)", nav: "tasks", data: data, request: request, context: context)
    }

    /// `POST /tasks/NAME/run` with `input` (JSON text, empty: `{}`) and `priority`: `task_run`.
    func taskRunAction(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let form: FormBody
        switch await mutatingForm(request, context) {
        case .success(let found): form = found
        case .failure(let refusal): return refused(refusal.reason, request: request, context: context, status: refusal.status)
        }
        let name = context.parameters.get("name") ?? ""
        var command: JSONObject = ["command": "task_run", "name": .string(name)]
        let text = (form["input"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if !text.isEmpty {
            guard let input = try? JSONValue.parse(text) else {
                return Self.redirect(to: "/tasks", message: "run \(name): the input is not valid JSON", failed: true)
            }
            command["input"] = input
        }
        if let priority = form["priority"], !priority.isEmpty { command["priority"] = .string(priority) }
        let answer = await run(command, context)
        guard answer["ok"]?.boolValue == true, let id = answer["run"]?["id"]?.stringValue else {
            return Self.redirect(to: "/tasks", message: "run \(name): \(Self.problem(answer))", failed: true)
        }
        return Self.redirect(to: "/runs/" + DashboardFormat.pathSegment(id), message: "run \(id) of \(name) queued", failed: false)
    }

    /// `POST /runs/ID` with `action` rerun or cancel: `task_rerun` or `task_cancel`.
    func runAction(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let form: FormBody
        switch await mutatingForm(request, context) {
        case .success(let found): form = found
        case .failure(let refusal): return refused(refusal.reason, request: request, context: context, status: refusal.status)
        }
        let id = context.parameters.get("id") ?? ""
        let action = form["action"] ?? ""
        guard action == "rerun" || action == "cancel" else {
            return refused("unknown action \"\(action)\"; expected rerun or cancel", request: request, context: context, status: .badRequest)
        }
        let answer = await run(["command": .string("task_" + action), "id": .string(id)], context)
        guard answer["ok"]?.boolValue == true else {
            return Self.redirect(to: "/runs/" + DashboardFormat.pathSegment(id), message: "\(action) \(id): \(Self.problem(answer))", failed: true)
        }
        let target = action == "rerun" ? (answer["run"]?["id"]?.stringValue ?? id) : id
        let message = action == "rerun" ? "run \(target) queued (a rerun of \(id))" : "run \(id): \(answer["run"]?["status"]?.stringValue ?? "cancelled")"
        return Self.redirect(to: "/runs/" + DashboardFormat.pathSegment(target), message: message, failed: false)
    }
}
