import AgentBase
import JSONSchema

/// A command that changes one resource of the settings (`task_create`, `schedule_update`,
/// `executor_delete`, …): each is the `settings_change` it stands for (`add_task`,
/// `set_schedule`, `remove_executor`), made by the settings commands' one path whichever front
/// sends it — checked as validate-settings checks the whole settings, written keeping the
/// file's formatting, applied by reload, answered once written and applied.
package protocol ResourceChangeCommand: AgentCommand where Answer == ResourceChangeAnswer, Host == any SettingsCommandHost {
    associatedtype Kind: SettingsResourceKind
    static var verb: SettingsResource.Verb { get }
    /// The resource's name, its definition (none to remove it) and the hash the client read.
    static func change(_ request: Request) -> (name: String, definition: JSONObject?, ifMatch: String?)
}

extension ResourceChangeCommand {
    static var resource: SettingsResource { Kind.resource }

    package static var name: String {
        let verbs: [SettingsResource.Verb: String] = [.add: "create", .set: "update", .remove: "delete"]
        return resource.rawValue + "_" + verbs[verb]!
    }
    package static var mutating: Bool { true }
    package static var answerSchema: JSONValue { ResourceCommands.changeAnswer(resource) }
    package static var unavailable: CommandError { ResourceCommands.unavailable(resource) }


    package static func run(_ request: Request, on host: any SettingsCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<ResourceChangeAnswer, CommandError>) -> Void) {
        let (name, definition, ifMatch) = change(request)
        // A new name is checked here, so that its refusal points at the request's name.
        if verb == .add, let problem = PlainName.problem(name, what: "\(resource.rawValue) name") {
            return respond(.failure(.invalid("/name: \(problem)", pointer: "/name")))
        }
        let settingsChange = SettingsChangeCommand.Change(action: SettingsChangeAction(verb, resource), name: name, settings: definition ?? [:])
        host.settingsChange(SettingsChangeCommand.Request(settingsChange, ifMatch: ifMatch)) { result in
            respond(result.map { ResourceChangeAnswer(change: $0, resource: resource, name: name) }
                .mapError { resource.pointed($0, name: name, verb: verb) })
        }
    }
}

/// Create and update: the request is the name and the whole definition.
extension ResourceChangeCommand where Request == DefinitionRequest {
    package static var requestSchema: JSONValue {
        CommandSchema.object([
            "name": ResourceCommands.name(resource),
            "definition": ["type": "object", "description": .string(resource.definitionSummary)],
            "if_match": ResourceCommands.ifMatch,
        ], required: ["name", "definition"])
    }
    package static var examples: [(request: JSONValue, answer: ResourceChangeAnswer)] {
        let name = ResourceCommands.exampleName(resource)
        return [(["name": .string(name), "definition": .object(resource.example), "if_match": "9c1e"], ResourceCommands.exampleChange(resource, name))]
    }

    package static func change(_ request: DefinitionRequest) -> (name: String, definition: JSONObject?, ifMatch: String?) {
        (request.name, request.definition, request.ifMatch)
    }
}

/// `task_create`, `schedule_create`, `executor_create` (`POST /api/tasks`, …): adds one to the
/// settings; refused if the name is taken.
package enum ResourceCreateCommand<Kind: SettingsResourceKind>: ResourceChangeCommand {
    package typealias Request = DefinitionRequest
    package static var verb: SettingsResource.Verb { .add }
    package static var summary: String {
        "Adds a \(resource.rawValue) to the settings (refused if the name is taken): checked as validate-settings checks the whole settings (every error at its JSON pointer, nothing written when invalid), written keeping the file's formatting, applied by reload."
    }
    package static var routes: [CommandRoute] { [.post("/api/\(resource.plural)")] }
}

/// `task_update`, `schedule_update`, `executor_update` (`PUT /api/tasks/{name}`, …): replaces
/// one's whole definition.
package enum ResourceUpdateCommand<Kind: SettingsResourceKind>: ResourceChangeCommand {
    package typealias Request = DefinitionRequest
    package static var verb: SettingsResource.Verb { .set }
    package static var summary: String {
        "Replaces a \(resource.rawValue)'s whole definition (checked with the whole settings, written keeping the file's formatting, applied by reload); if_match refuses it (412) when the file changed since it was read."
    }
    package static var routes: [CommandRoute] { [CommandRoute("PUT", "/api/\(resource.plural)/{name}")] }
}

/// `task_delete`, `schedule_delete`, `executor_delete` (`DELETE /api/tasks/{name}`, …): removes
/// one from the settings; refused (409, naming them) while something else names it.
package enum ResourceDeleteCommand<Kind: SettingsResourceKind>: ResourceChangeCommand {
    package typealias Request = DeletionRequest
    package static var verb: SettingsResource.Verb { .remove }
    package static var summary: String {
        "Removes a \(resource.rawValue) from the settings, written keeping the file's formatting and applied by reload; refused (409 conflict, nothing written) while anything else in the settings still names it, each referrer named."
    }
    package static var routes: [CommandRoute] { [.delete("/api/\(resource.plural)/{name}")] }
    package static var requestSchema: JSONValue {
        CommandSchema.object(["name": ResourceCommands.name(resource), "if_match": ResourceCommands.ifMatch], required: ["name"])
    }
    package static var examples: [(request: JSONValue, answer: ResourceChangeAnswer)] {
        let name = ResourceCommands.exampleName(resource)
        return [(["name": .string(name)], ResourceCommands.exampleChange(resource, name))]
    }

    package static func change(_ request: DeletionRequest) -> (name: String, definition: JSONObject?, ifMatch: String?) {
        (request.name, nil, request.ifMatch)
    }
}
