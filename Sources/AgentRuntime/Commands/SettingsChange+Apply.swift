import AgentBase
import AgentCommands
import AgentCore
import JSONSchema

/// A change of `settings_change`, applied to the file's text with ``JSONTextEditor``, so that
/// everything the change does not touch keeps its bytes (formatting, key order, `${env:NAME}`
/// references). Decoding checked which members its action needs.
extension SettingsChangeCommand.Change {
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

    fileprivate static func shape(_ pointer: String, _ expected: String, _ found: JSONValue, file: String) -> SettingsCommandError {
        let message = "expected \(expected), found \(Describe.value(found)); fix it first (e.g. with set_process or replace)"
        return SettingsCommandError(.invalid, "\(pointer): \(message)", errors: [["file": .string(file), "pointer": .string(pointer), "message": .string(message)]])
    }
}
