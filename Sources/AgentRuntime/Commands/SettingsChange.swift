import AgentBase
import AgentCommands
import AgentCore
import JSONSchema

/// One change of the settings document, as `settings_change` takes it:
///
/// ```json
/// {"action": "enable_module", "name": "weather"}
/// {"action": "add_process", "name": "station", "settings": {"type": "weather_feed"}}
/// {"action": "disable_process", "name": "trades"}
/// {"action": "replace", "text": "{\n  \"enabled_modules\": []\n}\n"}
/// {"action": "add_workflow", "name": "support", "settings": {"steps": [{"id": "a", "task": "classify"}]}}
/// {"action": "add_workflow_step", "name": "support", "step": {"id": "b", "task": "reply"}, "position": 1}
/// ```
///
/// Applied to the file's text with ``JSONTextEditor``, so that everything the change does not
/// touch keeps its bytes (formatting, key order, `${env:NAME}` references).
struct SettingsChange: Sendable, Equatable {
    typealias Action = SettingsChangeAction

    var action: Action
    /// The module, process or workflow (every action but `replace`).
    var name: String = ""
    /// `add_process`, `set_process`: the process's whole settings object; `add_workflow`,
    /// `set_workflow`: the workflow's whole definition.
    var settings: JSONObject = [:]
    /// `add_workflow_step`: the step object, and where it goes in the workflow's top-level
    /// steps (0 first; nil: last).
    var step: JSONObject = [:]
    var position: Int?
    /// `replace`: the whole document as text.
    var text: String = ""

    /// Reads a change from a request object; `pointer` is where it is in the request.
    init(json: JSONValue, pointer: String) throws(SettingsCommandError) {
        guard let object = json.objectValue else {
            throw .request(pointer, "expected a change object {\"action\": …}, found \(Describe.article(json))")
        }
        guard let actionValue = object["action"] else {
            throw .request(pointer, "a change needs \"action\": one of \(SettingsChangeAction.names.joined(separator: ", "))")
        }
        guard let name = actionValue.stringValue, let action = Action(rawValue: name) else {
            let found = actionValue.stringValue.map { "\"\($0)\"\(Suggestions.hint(for: $0, in: SettingsChangeAction.names))" } ?? Describe.value(actionValue)
            throw .request(pointer + "/action", "expected one of \(SettingsChangeAction.names.joined(separator: ", ")); found \(found)")
        }
        self.action = action
        var known = ["action"]
        switch action {
        case .replace:
            known.append("text")
            guard let text = object["text"]?.stringValue else {
                throw .request(pointer + "/text", "replace needs \"text\": the whole settings document as a string")
            }
            self.text = text
        default:
            known.append("name")
            guard let nameValue = object["name"] else {
                throw .request(pointer + "/name", "\(action.rawValue) needs \"name\" (a string)")
            }
            guard let name = nameValue.stringValue, !name.isEmpty else {
                throw .request(pointer + "/name", "expected a non-empty string, found \(Describe.value(nameValue))")
            }
            self.name = name
            if [.addProcess, .setProcess, .addWorkflow, .setWorkflow].contains(action) {
                known.append("settings")
                let what = action == .addProcess || action == .setProcess ? "the process's settings" : "the workflow's definition"
                guard let value = object["settings"] else {
                    let example = action == .addProcess || action == .setProcess ? "{\"type\": \"…\"}" : "{\"steps\": [{\"id\": \"…\", \"task\": \"…\"}]}"
                    throw .request(pointer + "/settings", "\(action.rawValue) needs \"settings\": \(what) object, e.g. \(example)")
                }
                guard let settings = value.objectValue else {
                    throw .request(pointer + "/settings", "expected an object (\(what)), found \(Describe.value(value))")
                }
                self.settings = settings
            }
            if action == .addWorkflowStep {
                known += ["step", "position"]
                guard let value = object["step"] else {
                    throw .request(pointer + "/step", "add_workflow_step needs \"step\": a step object, e.g. {\"id\": \"notify\", \"publish\": {\"type\": \"…\"}}")
                }
                guard let step = value.objectValue else {
                    throw .request(pointer + "/step", "expected a step object, found \(Describe.value(value))")
                }
                self.step = step
                if let value = object["position"], value != .null {
                    guard let number = value.numberValue, let index = number.intValue, index >= 0 else {
                        throw .request(pointer + "/position", "expected the step's index in the workflow's steps (an integer ≥ 0; absent: last), found \(Describe.value(value))")
                    }
                    position = index
                }
            }
        }
        for key in object.keys where !known.contains(key) && key != "command" {
            throw .request(pointer + "/" + JSONPointer.escape(key), "unknown property \"\(key)\" of \(action.rawValue); allowed: \(known.joined(separator: ", "))")
        }
    }

    /// A change of a decoded `settings_change` request: which members its action needs (and
    /// allows) is checked here, with the pointer of the member at fault.
    init(_ change: SettingsChangeCommand.Change, pointer: String) throws(SettingsCommandError) {
        let json: JSONValue
        do {
            json = try JSONValueEncoder().encode(change)
        } catch {
            throw .request(pointer, "the change cannot be read: \(error)")
        }
        try self.init(json: json, pointer: pointer)
    }

    init(action: Action, name: String = "", settings: JSONObject = [:], text: String = "", step: JSONObject = [:], position: Int? = nil) {
        self.action = action
        self.name = name
        self.settings = settings
        self.text = text
        self.step = step
        self.position = position
    }

    /// The change in a few words, for the run history and the log.
    var summary: String {
        action == .replace ? "replace (\(text.utf8.count) bytes)" : "\(action.rawValue) \(name)"
    }

    /// Applies the change to `bytes`, the settings text so far. Throws `not_found` for a
    /// process or module that is not there, `conflict` for a process that already is,
    /// `invalid` where the document's shape does not allow the edit.
    func apply(to bytes: [UInt8], file: String) throws(SettingsCommandError) -> [UInt8] {
        if action == .replace { return Array(text.utf8) }
        var editor: JSONTextEditor
        do {
            editor = try JSONTextEditor(bytes: bytes)
        } catch {
            throw SettingsCommandError(.invalid, "\(file) is not valid JSON (line \(error.line), column \(error.column): \(error.message)); fix it by hand or replace the whole document",
                                       errors: [["file": .string(file), "pointer": .string(error.pointer), "message": .string("not valid JSON at line \(error.line), column \(error.column): \(error.message)")]])
        }
        let document = editor.value
        guard document.objectValue != nil else {
            throw SettingsCommandError(.invalid, "\(file): expected a settings object at the top, found \(Describe.article(document)); replace the whole document",
                                       errors: [["file": .string(file), "pointer": "", "message": .string("expected an object, found \(Describe.article(document))")]])
        }
        let processPointer = "/processes/" + JSONPointer.escape(name)
        func edit(_ operation: (inout JSONTextEditor) throws(JSONEditError) -> Void) throws(SettingsCommandError) {
            do {
                try operation(&editor)
            } catch {
                throw SettingsCommandError(.invalid, "\(file): \(error.pointer): cannot \(summary): \(error.message)",
                                           errors: [["file": .string(file), "pointer": .string(error.pointer), "message": .string(error.message)]])
            }
        }
        switch action {
        case .enableModule:
            guard let list = document["enabled_modules"] else {
                try edit { editor throws(JSONEditError) in try editor.setMember("enabled_modules", to: [.string(name)], inObjectAt: "") }
                break
            }
            guard let items = list.arrayValue else { throw Self.shape("/enabled_modules", "an array of module names", list, file: file) }
            if !items.contains(.string(name)) {
                try edit { editor throws(JSONEditError) in try editor.append(.string(name), toArrayAt: "/enabled_modules") }
            }
        case .disableModule:
            let items = document["enabled_modules"]?.arrayValue ?? []
            let indices = items.indices.filter { items[$0] == .string(name) }
            guard !indices.isEmpty else {
                let names = items.compactMap(\.stringValue)
                throw SettingsCommandError(.notFound, "module \"\(name)\" is not enabled\(Suggestions.hint(for: name, in: names)); enabled: \(names.isEmpty ? "none" : names.joined(separator: ", "))")
            }
            for index in indices.reversed() {
                try edit { editor throws(JSONEditError) in try editor.removeItem(at: index, fromArrayAt: "/enabled_modules") }
            }
        case .addProcess:
            guard let processes = document["processes"] else {
                try edit { editor throws(JSONEditError) in try editor.setMember("processes", to: .object([name: .object(settings)]), inObjectAt: "") }
                break
            }
            guard let existing = processes.objectValue else { throw Self.shape("/processes", "an object of processes", processes, file: file) }
            if existing[name] != nil {
                throw SettingsCommandError(.conflict, "a process named \"\(name)\" already exists; change it with set_process, or choose another name")
            }
            try edit { editor throws(JSONEditError) in try editor.setMember(name, to: .object(settings), inObjectAt: "/processes") }
        case .removeProcess:
            _ = try existingProcess(in: document, file: file)
            try edit { editor throws(JSONEditError) in try editor.removeMember(name, fromObjectAt: "/processes") }
        case .setProcess:
            _ = try existingProcess(in: document, file: file)
            try edit { editor throws(JSONEditError) in try editor.setMember(name, to: .object(settings), inObjectAt: "/processes") }
        case .enableProcess:
            // Enabled is the default: the key goes (rather than writing "enabled": true).
            if try existingProcess(in: document, file: file)["enabled"] != nil {
                try edit { editor throws(JSONEditError) in try editor.removeMember("enabled", fromObjectAt: processPointer) }
            }
        case .disableProcess:
            if try existingProcess(in: document, file: file)["enabled"] != false {
                try edit { editor throws(JSONEditError) in try editor.setMember("enabled", to: false, inObjectAt: processPointer) }
            }
        case .addWorkflow:
            guard let workflows = document["workflows"] else {
                try edit { editor throws(JSONEditError) in try editor.setMember("workflows", to: .object([name: .object(settings)]), inObjectAt: "") }
                break
            }
            guard let existing = workflows.objectValue else { throw Self.shape("/workflows", "an object of workflows", workflows, file: file) }
            if existing[name] != nil {
                throw SettingsCommandError(.conflict, "a workflow named \"\(name)\" already exists; change it with an update (set_workflow), or choose another name")
            }
            try edit { editor throws(JSONEditError) in try editor.setMember(name, to: .object(settings), inObjectAt: "/workflows") }
        case .setWorkflow:
            _ = try existingWorkflow(in: document, file: file)
            try edit { editor throws(JSONEditError) in try editor.setMember(name, to: .object(settings), inObjectAt: "/workflows") }
        case .removeWorkflow:
            _ = try existingWorkflow(in: document, file: file)
            try edit { editor throws(JSONEditError) in try editor.removeMember(name, fromObjectAt: "/workflows") }
        case .addWorkflowStep:
            let workflow = try existingWorkflow(in: document, file: file)
            let stepsPointer = "/workflows/" + JSONPointer.escape(name) + "/steps"
            guard let steps = workflow["steps"] else {
                try edit { editor throws(JSONEditError) in try editor.setMember("steps", to: [.object(step)], inObjectAt: "/workflows/" + JSONPointer.escape(name)) }
                break
            }
            guard let items = steps.arrayValue else { throw Self.shape(stepsPointer, "an array of steps", steps, file: file) }
            let index = position ?? items.count
            guard index <= items.count else {
                throw .request("/position", "the workflow \"\(name)\" has \(items.count) step(s): a step can go at 0 to \(items.count), not \(index)")
            }
            try edit { editor throws(JSONEditError) in try editor.insert(.object(step), at: index, intoArrayAt: stepsPointer) }
        case .replace:
            break
        }
        return editor.bytes
    }

    /// The process's settings object; `not_found` (with the names there are) when there is none.
    private func existingProcess(in document: JSONValue, file: String) throws(SettingsCommandError) -> JSONObject {
        let processes = document["processes"]?.objectValue ?? [:]
        guard let value = processes[name] else {
            let names = processes.keys
            throw SettingsCommandError(.notFound, "no process named \"\(name)\"\(Suggestions.hint(for: name, in: names)); processes: \(names.isEmpty ? "none" : names.joined(separator: ", "))")
        }
        guard let object = value.objectValue else {
            throw Self.shape("/processes/" + JSONPointer.escape(name), "an object (the process's settings)", value, file: file)
        }
        return object
    }

    /// The workflow's definition object; `not_found` (with the names there are) when there is none.
    private func existingWorkflow(in document: JSONValue, file: String) throws(SettingsCommandError) -> JSONObject {
        let workflows = document["workflows"]?.objectValue ?? [:]
        guard let value = workflows[name] else {
            let names = workflows.keys
            throw SettingsCommandError(.notFound, "no workflow named \"\(name)\"\(Suggestions.hint(for: name, in: names)); workflows: \(names.isEmpty ? "none" : names.joined(separator: ", "))")
        }
        guard let object = value.objectValue else {
            throw Self.shape("/workflows/" + JSONPointer.escape(name), "an object (the workflow's definition)", value, file: file)
        }
        return object
    }

    private static func shape(_ pointer: String, _ expected: String, _ found: JSONValue, file: String) -> SettingsCommandError {
        let message = "expected \(expected), found \(Describe.value(found)); fix it first (e.g. with set_process or replace)"
        return SettingsCommandError(.invalid, "\(pointer): \(message)", errors: [["file": .string(file), "pointer": .string(pointer), "message": .string(message)]])
    }
}
