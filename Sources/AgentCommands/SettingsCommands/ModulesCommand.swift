import AgentBase
import JSONSchema

/// `modules`: the enabled modules with their process types, and the host's schema.
package enum ModulesCommand: AgentCommand {
    package typealias Host = any SettingsCommandHost

    /// The enabled modules (the runtime's own `chat` last) and the host's schema.
    package struct Answer: Encodable, Sendable, Equatable {
        package let ok = true
        package var file: String
        package var modules: [Module]
        /// The keys every process may have.
        package var hostSchema: JSONValue

        package init(file: String, modules: [Module], hostSchema: JSONValue) {
            self.file = file
            self.modules = modules
            self.hostSchema = hostSchema
        }

        enum CodingKeys: String, CodingKey {
            case ok, file, modules, hostSchema = "host_schema"
        }
    }

    /// A module with its process types.
    package struct Module: Encodable, Sendable, Equatable {
        package var name: String
        package var file: String
        package var available: Bool
        package var version: String?
        package var error: ConfigurationCommands.ModuleError?
        /// The runtime's own (`chat`).
        package var builtin: Bool?
        package var processTypes: [ProcessType]

        package init(name: String, file: String, available: Bool, version: String? = nil, error: ConfigurationCommands.ModuleError? = nil,
                     builtin: Bool? = nil, processTypes: [ProcessType]) {
            self.name = name
            self.file = file
            self.available = available
            self.version = version
            self.error = error
            self.builtin = builtin
            self.processTypes = processTypes
        }

        enum CodingKeys: String, CodingKey {
            case name, file, available, version, error, builtin, processTypes = "process_types"
        }
    }

    /// A process type as its module describes it.
    package struct ProcessType: Encodable, Sendable, Equatable {
        package var type: String
        package var kind: String
        package var description: String
        package var settingsSchema: JSONValue
        /// The event types it receives (absent: none).
        package var subscribes: [String]?

        package init(type: String, kind: String, description: String, settingsSchema: JSONValue, subscribes: [String]? = nil) {
            self.type = type
            self.kind = kind
            self.description = description
            self.settingsSchema = settingsSchema
            self.subscribes = subscribes
        }

        enum CodingKeys: String, CodingKey {
            case type, kind, description, settingsSchema = "settings_schema", subscribes
        }
    }

    package static let name = "modules"
    package static let summary = "The enabled modules with their process types: kind, description, settings JSON Schema; and the host's schema."
    package static let routes: [CommandRoute] = [.get("/api/modules")]
    package static let mutating = false
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "file": ["type": "string"], "host_schema": ["type": "object"],
        "modules": ["type": "array", "items": CommandSchema.object([
            "name": ["type": "string"], "file": ["type": "string"], "version": ["type": "string"], "available": ["type": "boolean"],
            "builtin": ["type": "boolean"], "error": ["type": "object"],
            "process_types": ["type": "array", "items": CommandSchema.object([
                "type": ["type": "string"], "kind": ["type": "string"], "description": ["type": "string"],
                "settings_schema": ["type": "object"], "subscribes": ["type": "array", "items": ["type": "string"]],
            ], required: ["type", "kind", "settings_schema"], open: true)],
        ], required: ["name", "available", "process_types"], open: true)],
    ], required: ["ok", "file", "modules", "host_schema"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [([:], Answer(file: "agent.json", modules: [
            Module(name: "feeds", file: "/opt/agent/modules/libfeeds.so", available: false,
                   error: ConfigurationCommands.ModuleError(code: "load_failed", message: "cannot open libfeeds.so"), processTypes: []),
            Module(name: "chat", file: "builtin", available: true, version: "1.0", builtin: true,
                   processTypes: [ProcessType(type: "chatbot", kind: "service", description: "Answers questions.", settingsSchema: [:], subscribes: ["chat.message"])]),
        ], hostSchema: [:]))]
    }
    package static var unavailable: CommandError {
        .unavailable("this agent was not started from a settings file: its settings cannot be read or changed here")
    }

    package static func run(_ request: NoFields, on host: any SettingsCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.modules(respond: respond)
    }
}
