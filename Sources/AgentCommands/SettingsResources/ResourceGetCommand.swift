import AgentBase
import JSONSchema

/// `task_get`, `schedule_get`, `executor_get`: one resource's definition as the settings file
/// has it (`${env:NAME}` references as written) and the file's hash to send back as `if_match`.
package enum ResourceGetCommand<Kind: SettingsResourceKind>: AgentCommand {
    package typealias Host = any SettingsCommandHost

    package typealias Request = NameRequest

    package struct Answer: Encodable, Sendable {
        package let ok = true
        package var name: String
        package var definition: JSONValue
        /// The settings file's hash (send it back as `if_match`).
        package var hash: String

        package init(name: String, definition: JSONValue, hash: String) {
            self.name = name
            self.definition = definition
            self.hash = hash
        }
    }

    static var resource: SettingsResource { Kind.resource }

    package static var name: String { resource.rawValue + "_get" }
    package static var summary: String {
        "One \(resource.rawValue)'s definition as the settings file has it (${env:NAME} references as written) and the file's hash (send it back as if_match)."
    }
    package static var routes: [CommandRoute] { [.get("/api/\(resource.plural)/{name}")] }
    package static var mutating: Bool { false }
    // Not admin-only as settings_get is (the file holds the users' password hashes): a
    // definition shows only itself, as workflow_get's does.
    package static var requestSchema: JSONValue { CommandSchema.object(["name": ResourceCommands.name(resource)], required: ["name"]) }
    package static var answerSchema: JSONValue {
        CommandSchema.object(["ok": ["const": true], "name": ["type": "string"], "definition": ["type": "object"], "hash": ["type": "string"]],
                             required: ["ok", "name", "definition", "hash"])
    }
    package static var examples: [(request: JSONValue, answer: Answer)] {
        let name = ResourceCommands.exampleName(resource)
        return [(["name": .string(name)], Answer(name: name, definition: .object(resource.example), hash: "9c1e"))]
    }
    package static var unavailable: CommandError { ResourceCommands.unavailable(resource) }

    package static func run(_ request: Request, on host: any SettingsCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.settingsResource(resource, named: request.name) { result in
            respond(result.map { Answer(name: request.name, definition: $0.definition, hash: $0.hash) })
        }
    }
}

/// A resource's definition as the settings file has it, and the file's hash.
package struct ResourceDefinition: Sendable {
    package var definition: JSONValue
    package var hash: String

    package init(definition: JSONValue, hash: String) {
        self.definition = definition
        self.hash = hash
    }
}
