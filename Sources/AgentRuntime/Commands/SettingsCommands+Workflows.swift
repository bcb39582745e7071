import AgentBase
import AgentCommands
import JSONSchema

/// The workflow definition commands (`workflow_get`, `workflow_create`, `workflow_update`,
/// `workflow_delete`, `workflow_add_step`): each change is a ``SettingsChange`` made by the
/// settings commands' one path (checked, written atomically keeping the formatting, reloaded),
/// whichever front sends it.
extension SettingsCommands {
    static let workflowDefinitionCommands: Set<String> = ["workflow_get", "workflow_create", "workflow_update", "workflow_delete", "workflow_add_step"]

    /// The `settings_change` request a definition command stands for.
    static func settingsChange(forWorkflow request: JSONValue) -> JSONValue {
        var change: JSONObject = ["command": "settings_change"]
        if let name = request["name"] { change["name"] = name }
        if let ifMatch = request["if_match"] { change["if_match"] = ifMatch }
        switch request["command"]?.stringValue {
        case "workflow_create"?:
            change["action"] = "add_workflow"
            change["settings"] = request["definition"]
        case "workflow_update"?:
            change["action"] = "set_workflow"
            change["settings"] = request["definition"]
        case "workflow_delete"?:
            change["action"] = "remove_workflow"
        default:
            change["action"] = "add_workflow_step"
            change["step"] = request["step"]
            change["position"] = request["position"]
        }
        return .object(change)
    }

    /// Answers a definition command on the loop: `workflow_get` from the file, the others as
    /// the settings change they stand for (`respond` on the loop).
    func answerWorkflow(_ request: JSONValue, supervisor: Supervisor, respond: @escaping (JSONValue) -> Void) {
        guard request["command"] == "workflow_get" else {
            let name = request["name"] ?? .null
            let change: SettingsChangeCommand.Request
            do {
                change = try JSONValueDecoder().decode(SettingsChangeCommand.Request.self, from: Self.settingsChange(forWorkflow: request))
            } catch {
                return respond(JSONValueDecoder.refusal(of: error).json)
            }
            return self.change(change, supervisor: supervisor) { answer in
                guard case .object(var object) = answer, answer["ok"] == true else { return respond(answer) }
                object["workflow"] = name
                respond(.object(object))
            }
        }
        let name = request["name"]?.stringValue ?? ""
        let contents: SettingsFile.Contents
        let document: JSONValue
        do throws(SettingsCommandError) {
            contents = try file.read()
            do {
                document = try JSONValue.parse(contents.bytes)
            } catch {
                throw SettingsCommandError(.unavailable, "\(shownPath) is not valid JSON (line \(error.line), column \(error.column): \(error.message))")
            }
        } catch {
            return respond(error.answer)
        }
        let workflows = document["workflows"]?.objectValue ?? [:]
        guard let definition = workflows[name] else {
            let names = workflows.keys
            return respond(SettingsCommandError(.notFound, "no workflow named \"\(name)\"\(Suggestions.hint(for: name, in: names)); workflows: \(names.isEmpty ? "none" : names.joined(separator: ", "))").answer)
        }
        var answer: JSONObject = ["ok": true, "name": .string(name), "definition": definition, "hash": .string(contents.hash)]
        if let version = supervisor.work.workflows?.definitions[name]?.version { answer["version"] = .string(version) }
        respond(.object(answer))
    }
}
