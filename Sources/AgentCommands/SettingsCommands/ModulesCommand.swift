import AgentBase
import JSONSchema

/// `modules`: the enabled modules with their process types, and the host's schema.
package enum ModulesCommand: AgentCommand {
    package typealias Host = any SettingsCommandHost

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
    ], required: ["ok", "modules"])
    package static var examples: [(request: JSONValue, answer: EncodedAnswer)] {
        [([:], EncodedAnswer(["ok": true, "file": "agent.json", "host_schema": [:], "modules": [
            ["name": "chat", "available": true, "builtin": true, "process_types": [["type": "chatbot", "kind": "service", "settings_schema": [:]]]],
        ]]))]
    }
    package static var unavailable: CommandError {
        .unavailable("this agent was not started from a settings file: its settings cannot be read or changed here")
    }

    package static func run(_ request: NoFields, on host: any SettingsCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void) {
        host.modules(respond: respond)
    }
}
