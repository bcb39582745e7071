import AgentBase
import JSONSchema

/// `validate`: the report of validate-settings --json, for the file or a given document.
package enum ValidateCommand: AgentCommand {
    package typealias Host = any SettingsCommandHost
    package struct Request: Codable, Sendable, Equatable {
        /// The document as text.
        package var text: String?
        /// The document.
        package var settings: JSONObject?

        package init(text: String? = nil, settings: JSONObject? = nil) {
            self.text = text
            self.settings = settings
        }
    }

    /// The report `validate-settings --json` prints.
    package struct Report: Encodable, Sendable, Equatable {
        package var file: String
        package var valid: Bool
        /// The problems that make the settings invalid.
        package var errors: [ConfigurationCommands.Issue]
        /// The modules and processes, when the document could be read.
        package var modules: [Module]?
        package var processes: [Process]?

        package init(file: String, valid: Bool, errors: [ConfigurationCommands.Issue], modules: [Module]? = nil, processes: [Process]? = nil) {
            self.file = file
            self.valid = valid
            self.errors = errors
            self.modules = modules
            self.processes = processes
        }
    }

    /// An enabled module, as validating found it.
    package struct Module: Encodable, Sendable, Equatable {
        package var name: String
        package var file: String
        package var available: Bool
        package var processTypes: [String]
        package var version: String?
        package var error: ConfigurationCommands.ModuleError?

        package init(name: String, file: String, available: Bool, processTypes: [String], version: String? = nil,
                     error: ConfigurationCommands.ModuleError? = nil) {
            self.name = name
            self.file = file
            self.available = available
            self.processTypes = processTypes
            self.version = version
            self.error = error
        }

        enum CodingKeys: String, CodingKey {
            case name, file, available, processTypes = "process_types", version, error
        }
    }

    /// A process of the settings, with its own problems.
    package struct Process: Encodable, Sendable, Equatable {
        package var name: String
        package var type: String
        package var enabled: Bool
        package var valid: Bool
        package var errors: [ConfigurationCommands.Issue]
        package var module: String?
        /// `service`, `monitor`, `executor`…, once its module is described.
        package var kind: String?

        package init(name: String, type: String, enabled: Bool, valid: Bool, errors: [ConfigurationCommands.Issue], module: String? = nil,
                     kind: String? = nil) {
            self.name = name
            self.type = type
            self.enabled = enabled
            self.valid = valid
            self.errors = errors
            self.module = module
            self.kind = kind
        }
    }

    /// The report, `"ok": true` with it.
    package struct Answer: Encodable, Sendable, Equatable {
        package var report: Report

        package init(_ report: Report) { self.report = report }

        enum CodingKeys: String, CodingKey { case ok }

        /// `ok` after the report's members when it lists the modules, before them otherwise
        /// (the order the answer always had).
        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            let complete = report.modules != nil
            if !complete { try container.encode(true, forKey: .ok) }
            try report.encode(to: encoder)
            if complete { try container.encode(true, forKey: .ok) }
        }
    }

    package static let name = "validate"
    package static let summary = "The report of validate-settings --json for the settings file, or for a document given as text or as an object (nothing is written)."
    package static let routes: [CommandRoute] = [.post("/api/validate")]
    package static let mutating = false
    /// A document may enable any library the agent's user owns, and describing it runs that
    /// library's code: not for the read role.
    package static let requiresAdmin = true
    package static let adminReason = "it loads the modules a document names, which runs their code"
    package static let requestSchema: JSONValue = CommandSchema.object([
        "text": ["type": "string", "description": "The document as text (as a settings editor has it)."],
        "settings": ["type": "object", "description": "The document."],
    ])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "file": ["type": "string"], "valid": ["type": "boolean"],
        "errors": ["type": "array", "items": ConfigurationCommands.issue], "modules": ["type": "array", "items": ["type": "object"]],
        "processes": ["type": "array", "items": ["type": "object"]],
    ], required: ["ok", "file", "valid", "errors"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [([:], Answer(Report(file: "agent.json", valid: true, errors: [],
                             modules: [Module(name: "feeds", file: "/opt/agent/modules/libfeeds.so", available: true, processTypes: ["trade_feed"], version: "1.2")],
                             processes: [Process(name: "trades", type: "trade_feed", enabled: true, valid: true, errors: [], module: "feeds", kind: "service")]))),
         (["text": "{"], Answer(Report(file: "agent.json", valid: false,
                                       errors: [ConfigurationCommands.Issue(file: "agent.json", pointer: "", message: "not valid JSON at line 1, column 2: unexpected end")]))),
         (["settings": ["enabled_modules": ["nosuch"]]],
          Answer(Report(file: "agent.json", valid: false, errors: [ConfigurationCommands.Issue(file: "agent.json", pointer: "/enabled_modules/0", message: "no module nosuch", process: "trades", followsFrom: "/enabled_modules/0")],
                        modules: [Module(name: "nosuch", file: "nosuch", available: false, processTypes: [], error: ConfigurationCommands.ModuleError(code: "not_found", message: "no module nosuch"))],
                        processes: [])))]
    }
    package static var unavailable: CommandError {
        .unavailable("this agent was not started from a settings file: its settings cannot be read or changed here")
    }

    package static func run(_ request: Request, on host: any SettingsCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.validate(request, respond: respond)
    }
}
