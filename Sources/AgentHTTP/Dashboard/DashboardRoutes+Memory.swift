import Foundation
import Hummingbird
import JSONSchema

extension DashboardRoutes {
    /// `GET /memory`: shared memory's keys (`memory_list`), agent-wide or with `?run=ID` a
    /// workflow run's, only those starting with `?prefix=`, paged with `?after=`; a form to
    /// write a key (admins).
    func memoryPage(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let query = request.uri.queryParameters
        let run = query["run"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
        let prefix = query["prefix"].map(String.init) ?? ""
        var listing: JSONObject = ["command": "memory_list", "prefix": .string(prefix), "limit": 100]
        if let run { listing["run"] = .string(run) }
        if let after = query["after"].map(String.init), !after.isEmpty { listing["after"] = .string(after) }
        let answer = await self.run(listing, context)
        var data: [String: Any] = ["run": run ?? "", "prefix": prefix, "scope": run.map { "workflow run \($0)" } ?? "the agent"]
        if answer["ok"]?.boolValue == true {
            data["entries"] = (answer["entries"]?.arrayValue ?? []).map { entry -> [String: Any] in
                let value = entry["value"] ?? .null
                let text = value.serialized(pretty: true)
                return ["key": DashboardFormat.text(entry["key"]), "version": DashboardFormat.text(entry["version"]),
                        "updated": DashboardFormat.text(entry["updated"]), "value": DashboardFormat.clipped(text, to: 4000)]
            }
            if let next = answer["next"]?.stringValue {
                var more = "/memory?after=" + DashboardFormat.queryValue(next) + "&prefix=" + DashboardFormat.queryValue(prefix)
                if let run { more += "&run=" + DashboardFormat.queryValue(run) }
                data["next"] = more
            }
        } else {
            data["error"] = Self.problem(answer)
        }
        return page("memory", title: "Memory", data: data, request: request, context: context)
    }

    /// `POST /memory` with `action` set (`key`, `value` as JSON, `expected_version`) or delete
    /// (`key`, `expected_version`), and `run` for a workflow run's scope.
    func memoryAction(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let form: FormBody
        switch await mutatingForm(request, context) {
        case .success(let found): form = found
        case .failure(let refusal): return refused(refusal.reason, request: request, context: context, status: refusal.status)
        }
        let key = form["key"] ?? ""
        let run = form["run"].flatMap { $0.isEmpty ? nil : $0 }
        var back = "/memory"
        if let run { back += "?run=" + DashboardFormat.queryValue(run) }
        var command: JSONObject = ["key": .string(key)]
        if let run { command["run"] = .string(run) }
        if let text = form["expected_version"], !text.isEmpty {
            guard let version = Int(text), version >= 0 else {
                return Self.redirect(to: back, message: "the expected version must be a whole number, 0 or more; found \"\(text)\"", failed: true)
            }
            command["expected_version"] = .number(JSONNumber(version))
        }
        switch form["action"] ?? "" {
        case "set":
            let text = form["value"] ?? ""
            do {
                command["value"] = try JSONValue.parse(text)
            } catch {
                return Self.redirect(to: back, message: "\(key): the value is not valid JSON at line \(error.line), column \(error.column): \(error.message) (a string needs quotes: \"text\")", failed: true)
            }
            command["command"] = "memory_set"
        case "delete":
            command["command"] = "memory_delete"
        case let action:
            return refused("unknown action \"\(action)\"; expected set or delete", request: request, context: context, status: .badRequest)
        }
        let answer = await self.run(command, context)
        guard answer["ok"]?.boolValue == true else {
            return Self.redirect(to: back, message: "\(key): \(Self.problem(answer))", failed: true)
        }
        let done = command["command"] == "memory_set" ? "\(key) = version \(DashboardFormat.text(answer["entry"]?["version"]))"
            : answer["deleted"] == true ? "\(key) deleted" : "\(key) did not exist"
        return Self.redirect(to: back, message: done, failed: false)
    }
}
