import AgentBase
import AgentCommands
import JSONSchema

/// The resources of the settings file (tasks, schedules, executors, workflows) read one at a
/// time, and why a removal the settings refuse is refused: what still names the resource.
extension SettingsCommands {
    /// `task_get`, `workflow_get`, …: the definition of `name` as the file has it, and the
    /// file's hash; `not_found` naming those there are.
    func resource(_ resource: SettingsResource, named name: String) -> Result<ResourceDefinition, CommandError> {
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
            return .failure(error.refusal)
        }
        let members = document[resource.collection]?.objectValue ?? [:]
        guard let definition = members[name], resource.holds(definition) else {
            let names = members.keys.filter { members[$0].map(resource.holds) ?? false }
            return .failure(.notFound("no \(resource.rawValue) named \(PlainName.shown(name))\(Suggestions.hint(for: name, in: names)); \(resource.plural): \(names.isEmpty ? "none" : names.joined(separator: ", "))"))
        }
        return .success(ResourceDefinition(definition: definition, hash: contents.hash))
    }

    /// The refusal of removals (`remove_task`, `remove_process`, …) whose result the settings
    /// refuse: each problem is something that still names what goes (a schedule's task, an
    /// executor's task, a task whose `require` only that executor met), so the refusal is a
    /// `conflict` naming them (`errors` keeps every problem with its pointer). Nil when the
    /// changes are not all removals.
    static func referenced(_ changes: [SettingsChangeCommand.Change], errors: [JSONValue], document: JSONValue) -> SettingsCommandError? {
        let removed: [(what: String, pointer: String)] = changes.compactMap { change in
            if change.action == .removeProcess { return ("process \(PlainName.shown(change.name))", "/processes/" + JSONPointer.escape(change.name)) }
            guard let resourceChange = change.action.resourceChange, resourceChange.verb == .remove else { return nil }
            return ("\(resourceChange.resource.rawValue) \(PlainName.shown(change.name))", resourceChange.resource.pointer(change.name))
        }
        guard removed.count == changes.count, !errors.isEmpty else { return nil }
        var referrers: [String] = []
        for error in errors {
            let pointer = error["pointer"]?.stringValue ?? ""
            let referrer = "\(Self.owner(of: pointer, in: document)) (\(pointer): \(error["message"]?.stringValue ?? "?"))"
            if !referrers.contains(referrer) { referrers.append(referrer) }
        }
        let what = removed.map(\.what).joined(separator: ", ")
        return SettingsCommandError(.conflict, "\(what) is still named by \(referrers.prefix(5).joined(separator: "; "))\(referrers.count > 5 ? " and \(referrers.count - 5) more" : ""); change or remove \(referrers.count == 1 ? "it" : "them") first (nothing was written)",
                                    errors: errors)
    }

    /// What in the settings `pointer` is in, in words: `schedule "nightly"`, `executor "crunchers"`.
    static func owner(of pointer: String, in document: JSONValue) -> String {
        let tokens = JSONPointer(pointer)?.tokens ?? []
        guard tokens.count >= 2 else { return tokens.first.map { "\"\($0)\"" } ?? "the settings" }
        let name = PlainName.shown(tokens[1])
        switch tokens[0] {
        case "tasks": return "task \(name)"
        case "schedules": return "schedule \(name)"
        case "workflows": return "workflow \(name)"
        case "processes":
            return SettingsResource.executor.holds(document["processes"]?[tokens[1]] ?? .null) ? "executor \(name)" : "process \(name)"
        case "assignment" where tokens[1] == "tasks" && tokens.count > 2:
            return "the assignment strategy of task \(PlainName.shown(tokens[2]))"
        default:
            return "\"\(tokens[0])\""
        }
    }
}
