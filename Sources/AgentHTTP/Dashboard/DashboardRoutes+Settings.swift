import Foundation
import Hummingbird
import JSONSchema

extension DashboardRoutes {
    /// The settings editor: the file's text (`settings_get`) in a textarea.
    func settingsPage(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let answer = await run(["command": "settings_get"], context)
        guard answer["ok"]?.boolValue == true, let text = answer["text"]?.stringValue else {
            return page("settings", title: "Settings", data: ["error": Self.problem(answer)], request: request, context: context)
        }
        var data = Self.editor(text: text, hash: DashboardFormat.text(answer["hash"]), path: DashboardFormat.text(answer["path"]))
        if let parseError = answer["parse_error"]?.stringValue { data["error"] = "The file is not valid JSON: \(parseError)" }
        return page("settings", title: "Settings", data: data, request: request, context: context)
    }

    static func editor(text: String, hash: String, path: String) -> [String: Any] {
        let lineCount = text.split(separator: "\n", omittingEmptySubsequences: false).count
        return ["editable": true, "text": text, "hash": hash, "path": path, "rows": String(min(max(lineCount + 2, 12), 40))]
    }

    /// `POST /settings`: the settings `replace` change (checked as validate-settings checks,
    /// written, applied by reload). Refused: the same page with the text as submitted and
    /// every error at its line.
    func settingsSubmit(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let form: FormBody
        switch await mutatingForm(request, context) {
        case .success(let found): form = found
        case .failure(let refusal): return refused(refusal.reason, request: request, context: context, status: refusal.status)
        }
        let text = (form["text"] ?? "").replacingOccurrences(of: "\r\n", with: "\n")
        var change: JSONObject = ["command": "settings_change", "action": "replace", "text": .string(text)]
        if let hash = form["hash"], !hash.isEmpty { change["if_match"] = .string(hash) }
        let answer = await run(change, context)
        if answer["ok"]?.boolValue == true {
            let message: String
            if answer["changed"]?.boolValue == false {
                message = "No change: the settings already say so."
            } else {
                func names(_ key: String) -> String {
                    let list = answer[key]?.arrayValue?.compactMap(\.stringValue) ?? []
                    return list.isEmpty ? "none" : list.joined(separator: ", ")
                }
                message = "Saved and applied. Restarted: \(names("restarted")); started: \(names("started")); stopped: \(names("stopped"))."
            }
            return Self.redirect(to: "/settings", message: message, failed: false)
        }
        var data = Self.editor(text: text, hash: form["hash"] ?? "", path: "")
        data["error"] = Self.problem(answer)
        let errors = Self.placed(answer["errors"]?.arrayValue ?? [], in: text)
        if !errors.isEmpty {
            data["hasErrors"] = true
            data["errors"] = errors.map { ["line": String($0.line), "pointer": $0.pointer, "pointerShown": $0.pointer.isEmpty ? "(document)" : $0.pointer, "message": $0.message] }
            var byLine: [Int: [String]] = [:]
            for error in errors { byLine[error.line, default: []].append(error.message) }
            data["lines"] = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { index, line in
                let messages = byLine[index + 1] ?? []
                return ["number": String(index + 1), "text": String(line), "error": !messages.isEmpty, "messages": messages] as [String: Any]
            }
        }
        return page("settings", title: "Settings", data: data, request: request, context: context, status: APIResponse.status(of: answer))
    }

    struct PlacedError {
        var line: Int
        var pointer: String
        var message: String
    }

    /// Each error of a refused change at its line of `text`: the line of the member its JSON
    /// pointer names (or of the nearest enclosing member the text has), or for text that is
    /// not JSON the line the parser gave.
    static func placed(_ errors: [JSONValue], in text: String) -> [PlacedError] {
        let editor = try? JSONTextEditor(text)
        return errors.map { error in
            let pointer = error["pointer"]?.stringValue ?? ""
            let message = error["message"]?.stringValue ?? error.stringValue ?? DashboardFormat.text(error)
            var line = 1
            if let editor, let location = editor.location(of: pointer) {
                line = location.line
            } else if let range = message.range(of: #"line (\d+)"#, options: .regularExpression),
                      let number = Int(message[range].dropFirst(5)) {
                line = number
            }
            return PlacedError(line: line, pointer: pointer, message: message)
        }
    }

    // MARK: Modules

    /// The modules the settings enable, with their process types (`modules`), and the forms
    /// that enable or disable one (`settings_change`).
    func modulesPage(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let answer = await run(["command": "modules"], context)
        var data: [String: Any] = [:]
        if answer["ok"]?.boolValue == true {
            data["canChange"] = true
            data["modules"] = (answer["modules"]?.arrayValue ?? []).map { module in
                let name = DashboardFormat.text(module["name"])
                let builtin = module["builtin"]?.boolValue == true
                var state = builtin ? "built in" : module["available"]?.boolValue == false ? "enabled, not available" : "enabled"
                if let problem = module["error"]?["message"]?.stringValue { state += ": " + problem }
                var row: [String: Any] = [
                    "name": name, "version": DashboardFormat.text(module["version"]), "state": state,
                    "types": (module["process_types"]?.arrayValue ?? []).map { type in
                        ["type": DashboardFormat.text(type["type"]), "kind": DashboardFormat.text(type["kind"]), "description": DashboardFormat.text(type["description"])]
                    },
                ]
                if !builtin { row["toggle"] = ["action": "disable_module", "label": "Disable"] }
                return row
            }
        } else {
            data["error"] = Self.problem(answer)
        }
        return page("modules", title: "Modules", data: data, request: request, context: context)
    }

    /// `POST /modules` with `action` enable_module or disable_module and `name`.
    func moduleAction(_ request: Request, _ context: AgentRequestContext) async -> Response {
        let form: FormBody
        switch await mutatingForm(request, context) {
        case .success(let found): form = found
        case .failure(let refusal): return refused(refusal.reason, request: request, context: context, status: refusal.status)
        }
        let action = form["action"] ?? ""
        let name = (form["name"] ?? "").trimmingCharacters(in: .whitespaces)
        guard action == "enable_module" || action == "disable_module" else {
            return refused("unknown action \"\(action)\"; expected enable_module or disable_module", request: request, context: context, status: .badRequest)
        }
        let answer = await run(["command": "settings_change", "action": .string(action), "name": .string(name)], context)
        let ok = answer["ok"]?.boolValue == true
        let verb = action == "enable_module" ? "enable" : "disable"
        let message = ok ? (answer["changed"]?.boolValue == false ? "\(name): no change" : "\(verb) \(name): saved and applied") : "\(verb) \(name): \(Self.problem(answer))"
        return Self.redirect(to: "/modules", message: message, failed: !ok)
    }
}
