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
            try Self.edit(&editor, summary: summary, file: file, operation)
        }
        if let resourceChange = action.resourceChange {
            try change(resourceChange.resource, resourceChange.verb, in: &editor, file: file)
            return editor.bytes
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
        case .addWorkflowStep:
            let workflow = try existing(.workflow, in: document, file: file)
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
        case .replace, .addWorkflow, .setWorkflow, .removeWorkflow, .addTask, .setTask, .removeTask, .addSchedule, .setSchedule, .removeSchedule,
             .addExecutor, .setExecutor, .removeExecutor:
            // replace: above; the resources' changes: change(_:_:in:file:).
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

    /// Adds, replaces or removes the resource `name` of the settings (`add_task`, `set_workflow`,
    /// `remove_executor`, …): its member of ``SettingsResource/collection`` and nothing else.
    private func change(_ resource: SettingsResource, _ verb: SettingsResource.Verb, in editor: inout JSONTextEditor, file: String) throws(SettingsCommandError) {
        let document = editor.value
        let collection = resource.collection
        let definition = try verb == .remove ? nil : Self.definition(of: resource, settings)
        func edit(_ operation: (inout JSONTextEditor) throws(JSONEditError) -> Void) throws(SettingsCommandError) {
            try Self.edit(&editor, summary: summary, file: file, operation)
        }
        switch verb {
        case .add:
            guard let members = document[collection] else {
                try edit { editor throws(JSONEditError) in try editor.setMember(collection, to: .object([name: .object(definition ?? [:])]), inObjectAt: "") }
                return
            }
            guard let existing = members.objectValue else { throw Self.shape("/" + collection, "an object of \(collection) by name", members, file: file) }
            if let taken = existing[name] {
                let what = resource.holds(taken) ? "\(resource.rawValue)" : "process (of type \(taken["type"].map(Describe.value) ?? "none"))"
                throw SettingsCommandError(.conflict, "a \(what) named \(PlainName.shown(name)) already exists; replace it (`agent-control \(resource.rawValue) define \(name) --replace`, or set_\(resource.rawValue): PUT /api/\(resource.plural)/{name}), or choose another name")
            }
            try edit { editor throws(JSONEditError) in try editor.setMember(name, to: .object(definition ?? [:]), inObjectAt: "/" + collection) }
        case .set:
            _ = try existing(resource, in: document, file: file)
            try edit { editor throws(JSONEditError) in try editor.setMember(name, to: .object(definition ?? [:]), inObjectAt: "/" + collection) }
        case .remove:
            _ = try existing(resource, in: document, file: file)
            try edit { editor throws(JSONEditError) in try editor.removeMember(name, fromObjectAt: "/" + collection) }
        }
    }

    /// The definition written for `resource`: an executor is a process of type `"executor"`,
    /// which its definition may leave out (written first then) but not contradict.
    private static func definition(of resource: SettingsResource, _ settings: JSONObject) throws(SettingsCommandError) -> JSONObject {
        guard resource == .executor else { return settings }
        guard let type = settings["type"] else {
            let typed: [(String, JSONValue)] = [("type", .string(SettingsResource.executorType))]
            return JSONObject(typed + zip(settings.keys, settings.values).map { ($0, $1) })
        }
        guard type.stringValue == SettingsResource.executorType else {
            throw .request("/settings/type", "an executor is a process of type \"executor\" (or leave \"type\" out); found \(Describe.value(type)) — another kind of process is changed with add_process or set_process")
        }
        return settings
    }

    /// The resource's definition object; `not_found` (with the names there are) when there is
    /// none, or — an executor — when the process of that name is not an executor.
    private func existing(_ resource: SettingsResource, in document: JSONValue, file: String) throws(SettingsCommandError) -> JSONObject {
        let members = document[resource.collection]?.objectValue ?? [:]
        let names = members.keys.filter { members[$0].map(resource.holds) ?? false }
        guard let value = members[name], resource.holds(value) else {
            let other = members[name].map { " (there is a process of that name, of type \($0["type"].map(Describe.value) ?? "none"): not an executor)" } ?? ""
            throw SettingsCommandError(.notFound, "no \(resource.rawValue) named \(PlainName.shown(name))\(other)\(Suggestions.hint(for: name, in: names)); \(resource.plural): \(names.isEmpty ? "none" : names.joined(separator: ", "))")
        }
        guard let object = value.objectValue else {
            throw Self.shape(resource.pointer(name), "an object (the \(resource.rawValue)'s definition)", value, file: file)
        }
        return object
    }

    private static func edit(_ editor: inout JSONTextEditor, summary: String, file: String, _ operation: (inout JSONTextEditor) throws(JSONEditError) -> Void) throws(SettingsCommandError) {
        do {
            try operation(&editor)
        } catch {
            throw SettingsCommandError(.invalid, "\(file): \(error.pointer): cannot \(summary): \(error.message)",
                                       errors: [["file": .string(file), "pointer": .string(error.pointer), "message": .string(error.message)]])
        }
    }

    fileprivate static func shape(_ pointer: String, _ expected: String, _ found: JSONValue, file: String) -> SettingsCommandError {
        let message = "expected \(expected), found \(Describe.value(found)); fix it first (e.g. with set_process or replace)"
        return SettingsCommandError(.invalid, "\(pointer): \(message)", errors: [["file": .string(file), "pointer": .string(pointer), "message": .string(message)]])
    }
}
