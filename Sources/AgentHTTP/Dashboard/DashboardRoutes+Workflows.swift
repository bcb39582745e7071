import AgentWork
import Foundation
import Hummingbird
import JSONSchema

extension DashboardRoutes {
    /// `GET /workflows`: `workflow_list` (a start form each, for admins) and the newest 50 runs
    /// of `workflow_runs` (`?workflow=NAME`: of that workflow only).
    func workflowsPage(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let list = await run(["command": "workflow_list"], context)
        var data: [String: Any] = [:]
        if list["ok"]?.boolValue == true {
            data["workflows"] = (list["workflows"]?.arrayValue ?? []).map { workflow -> [String: Any] in
                let name = DashboardFormat.text(workflow["name"])
                return ["name": name, "path": DashboardFormat.pathSegment(name), "description": DashboardFormat.text(workflow["description"]),
                        "steps": (workflow["steps"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: " → "),
                        "version": DashboardFormat.text(workflow["version"]), "trigger": DashboardFormat.text(workflow["on_event"]),
                        "running": DashboardFormat.text(workflow["running"] ?? 0), "waiting": DashboardFormat.text(workflow["waiting"] ?? 0)]
            }
        } else {
            data["error"] = Self.problem(list)
        }
        var query: JSONObject = ["command": "workflow_runs", "limit": 50]
        if let workflow = request.uri.queryParameters["workflow"].map(String.init), !workflow.isEmpty {
            query["workflow"] = .string(workflow)
            data["selected"] = workflow
        }
        let runs = await run(query, context)
        data["runs"] = (runs["runs"]?.arrayValue ?? []).map(Self.workflowRunRow)
        if runs["ok"]?.boolValue != true, data["error"] == nil { data["error"] = Self.problem(runs) }
        return page("workflows", title: "Workflows", data: data, request: request, context: context)
    }

    /// A run of `workflow_runs` as the runs table shows it.
    static func workflowRunRow(_ run: JSONValue) -> [String: Any] {
        let id = DashboardFormat.text(run["id"])
        return ["id": id, "path": DashboardFormat.pathSegment(id), "workflow": DashboardFormat.text(run["workflow"]),
                "status": DashboardFormat.text(run["status"]), "requestedBy": DashboardFormat.text(run["requested_by"]),
                "started": DashboardFormat.text(run["started_at"]), "took": Self.seconds(run["duration"]),
                "error": RunListing.errorPreview(run) ?? ""]
    }

    /// `GET /workflow-runs/ID`: `workflow_show` — the run, and its step log as a timeline
    /// (each step's start from the run's start, its duration, output or error), with approve
    /// and reject forms on a waiting approval.
    func workflowRunPage(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let id = context.parameters.get("id") ?? ""
        let answer = await run(["command": "workflow_show", "id": .string(id)], context)
        guard answer["ok"]?.boolValue == true, let run = answer["run"] else {
            let status: HTTPResponse.Status = answer["code"]?.stringValue == "not_found" ? .notFound : .serviceUnavailable
            return page("workflowRun", title: "Workflow run \(id)", nav: "workflows", data: ["id": id, "error": Self.problem(answer)],
                        request: request, context: context, status: status)
        }
        let status = DashboardFormat.text(run["status"])
        let started = Self.instant(run["started_at"])
        var facts: [[String: Any]] = [
            ["label": "Workflow", "value": DashboardFormat.text(run["workflow"])], ["label": "Version", "value": DashboardFormat.text(run["version"])],
            ["label": "Requested by", "value": DashboardFormat.text(run["requested_by"])], ["label": "Started", "value": DashboardFormat.text(run["started_at"])],
        ]
        if let ended = run["ended_at"] { facts.append(["label": "Ended", "value": DashboardFormat.text(ended)]) }
        if run["duration"] != nil { facts.append(["label": "Took", "value": Self.seconds(run["duration"])]) }
        facts.append(["label": "Agent", "value": run["agent"]?.stringValue ?? "this agent"])
        let steps = answer["steps"]?.arrayValue ?? []
        var data: [String: Any] = [
            "id": id, "path": DashboardFormat.pathSegment(id), "status": status, "found": true, "facts": facts,
            "finished": ["succeeded", "failed", "cancelled"].contains(status), "signature": Self.signature(status, steps),
            "input": (run["input"] ?? .object([:])).serialized(pretty: true),
            "steps": steps.map { Self.stepRow($0, runPath: DashboardFormat.pathSegment(id), runStart: started, viewer: context.identity) },
        ]
        if let variables = run["variables"]?.objectValue, !variables.isEmpty { data["variables"] = JSONValue.object(variables).serialized(pretty: true) }
        if let output = run["output"] { data["output"] = output.serialized(pretty: true) }
        if let error = run["error"]?.stringValue { data["failure"] = error }
        return page("workflowRun", title: "Workflow run \(id)", nav: "workflows", data: data, request: request, context: context)
    }

    /// One line of the step log as the timeline shows it; a waiting approval's form only for
    /// a `viewer` among its approvers (by name or role), who alone may answer it.
    static func stepRow(_ step: JSONValue, runPath: String, runStart: Double?, viewer: APIIdentity?) -> [String: Any] {
        let id = DashboardFormat.text(step["step"])
        let status = DashboardFormat.text(step["status"])
        var row: [String: Any] = [
            "step": id, "stepPath": DashboardFormat.pathSegment(id), "runPath": runPath, "kind": DashboardFormat.text(step["kind"]),
            "status": status, "attempt": DashboardFormat.text(step["attempt"] ?? 1), "took": Self.seconds(step["duration"]),
        ]
        // The timeline: when the step started, from the run's start.
        if let runStart, let at = Self.instant(step["started_at"]) { row["at"] = String(format: "+%.3f s", at - runStart) }
        if let output = step["output"], output != .null { row["output"] = String(output.serialized().prefix(500)) }
        if let error = step["error"]?.stringValue { row["failure"] = error }
        if let task = step["task_run"]?.stringValue { row["taskRun"] = task; row["taskPath"] = DashboardFormat.pathSegment(task) }
        // Which executor and agent ran the step's task (once it ended).
        if step["kind"] == "task", let agent = step["agent"]?.stringValue {
            row["ranBy"] = "on \(step["executor"]?.stringValue ?? "the task's own executor"), agent \(agent)"
        }
        if let deadline = step["deadline"]?.stringValue, !["succeeded", "failed", "cancelled", "timed_out"].contains(status) { row["deadline"] = deadline }
        if step["kind"] == "approval" {
            row["prompt"] = DashboardFormat.text(step["prompt"])
            row["approvers"] = (step["approvers"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", ")
            let approvers = (step["approvers"]?.arrayValue ?? []).compactMap(\.stringValue)
            let mayAnswer = viewer.map { approvers.contains($0.name) || approvers.contains($0.role.rawValue) } ?? false
            row["awaiting"] = status == "waiting" && mayAnswer
            row["waitingForOthers"] = status == "waiting" && !mayAnswer
            if let decision = step["decision"] {
                row["decision"] = "\(DashboardFormat.text(decision["decision"])) by \(DashboardFormat.text(decision["by"]))"
                    + (decision["comment"]?.stringValue.map { ": \($0)" } ?? "")
            }
        }
        if step["kind"] == "wait_event", let type = step["type"]?.stringValue {
            // With its resolved correlation (`where`), which says which event is this run's.
            row["waitsFor"] = type + (step["where"].map { " where " + String($0.serialized().prefix(200)) } ?? "")
        }
        if step["kind"] == "wait_signal", let name = step["signal"]?.stringValue { row["waitsFor"] = "signal " + name }
        return row
    }

    /// What the page's script compares to see that the run moved on: its status and each step's.
    static func signature(_ status: String, _ steps: [JSONValue]) -> String {
        ([status] + steps.map { "\(DashboardFormat.text($0["step"])):\(DashboardFormat.text($0["status"]))" }).joined(separator: ",")
    }

    /// `POST /workflows/NAME/run` with `input` (JSON text, empty: `{}`): `workflow_run`, then the run's page.
    func workflowStartAction(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let form: FormBody
        switch await mutatingForm(request, context) {
        case .success(let found): form = found
        case .failure(let refusal): return refused(refusal.reason, request: request, context: context, status: refusal.status)
        }
        let name = context.parameters.get("name") ?? ""
        var command: JSONObject = ["command": "workflow_run", "name": .string(name)]
        let text = (form["input"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if !text.isEmpty {
            guard let input = try? JSONValue.parse(Data(text.utf8)) else {
                return Self.redirect(to: "/workflows", message: "start \(name): the input is not valid JSON", failed: true)
            }
            command["input"] = input
        }
        let answer = await run(command, context)
        guard answer["ok"]?.boolValue == true, let id = answer["run"]?["id"]?.stringValue else {
            return Self.redirect(to: "/workflows", message: "start \(name): \(Self.problem(answer))", failed: true)
        }
        return Self.redirect(to: "/workflow-runs/" + DashboardFormat.pathSegment(id), message: "run \(id) of \(name) started", failed: false)
    }

    /// `POST /workflow-runs/ID` with `action` cancel (admins): `workflow_cancel`.
    func workflowRunAction(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let form: FormBody
        switch await mutatingForm(request, context) {
        case .success(let found): form = found
        case .failure(let refusal): return refused(refusal.reason, request: request, context: context, status: refusal.status)
        }
        let id = context.parameters.get("id") ?? ""
        guard form["action"] == "cancel" else {
            return refused("unknown action \"\(form["action"] ?? "")\"; expected cancel", request: request, context: context, status: .badRequest)
        }
        let answer = await run(["command": "workflow_cancel", "id": .string(id)], context)
        let back = "/workflow-runs/" + DashboardFormat.pathSegment(id)
        guard answer["ok"]?.boolValue == true else { return Self.redirect(to: back, message: "cancel \(id): \(Self.problem(answer))", failed: true) }
        return Self.redirect(to: back, message: "run \(id) cancelled", failed: false)
    }

    /// `POST /workflow-runs/ID/steps/STEP` with `action` approve or reject and a `comment`:
    /// `workflow_approve` / `workflow_reject` as the logged-in person (any role: the step
    /// checks that the person is one of its approvers).
    func workflowDecisionAction(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let form: FormBody
        switch await mutatingForm(request, context) {
        case .success(let found): form = found
        case .failure(let refusal): return refused(refusal.reason, request: request, context: context, status: refusal.status)
        }
        let id = context.parameters.get("id") ?? "", step = context.parameters.get("step") ?? ""
        let action = form["action"] ?? ""
        guard action == "approve" || action == "reject" else {
            return refused("unknown action \"\(action)\"; expected approve or reject", request: request, context: context, status: .badRequest)
        }
        var command: JSONObject = ["command": .string("workflow_" + action), "id": .string(id), "step": .string(step)]
        if let comment = form["comment"]?.trimmingCharacters(in: .whitespacesAndNewlines), !comment.isEmpty { command["comment"] = .string(comment) }
        let answer = await run(command, context)
        let back = "/workflow-runs/" + DashboardFormat.pathSegment(id)
        guard answer["ok"]?.boolValue == true else { return Self.redirect(to: back, message: "\(action) \(step): \(Self.problem(answer))", failed: true) }
        return Self.redirect(to: back, message: "\(step) \(action == "approve" ? "approved" : "rejected")", failed: false)
    }

    /// Seconds of an answer as `0.125 s`.
    static func seconds(_ value: JSONValue?) -> String {
        DashboardFormat.number(value).map { String(format: "%.3f s", $0) } ?? ""
    }

    /// An ISO 8601 time of an answer as seconds since 1970.
    static func instant(_ value: JSONValue?) -> Double? {
        guard let text = value?.stringValue else { return nil }
        let formatter = ISO8601DateFormatter()
        for options: ISO8601DateFormatter.Options in [[.withInternetDateTime, .withFractionalSeconds], [.withInternetDateTime]] {
            formatter.formatOptions = options
            if let date = formatter.date(from: text) { return date.timeIntervalSince1970 }
        }
        return nil
    }
}
