import AgentBase
import AgentSupervision
import JSONSchema

/// `process`: starts, stops or restarts one process (`POST /api/processes/{name}/ACTION`).
package enum ProcessCommand: AgentCommand {
    package typealias Host = any SupervisionCommandHost
    package enum Action: String, Codable, Sendable, CaseIterable {
        case start, stop, restart
    }

    package struct Request: Codable, Sendable, Equatable {
        package var name: String
        package var action: Action

        package init(name: String, action: Action) {
            self.name = name
            self.action = action
        }
    }

    /// The process as `status` shows it, after the action; a process with replicas (named
    /// without #N): each replica.
    package struct Answer: Encodable, Sendable {
        package let ok = true
        package var process: SupervisedProcessInfo?
        package var processes: [SupervisedProcessInfo]?

        package init(process: SupervisedProcessInfo) { self.process = process }
        package init(processes: [SupervisedProcessInfo]) { self.processes = processes }
    }

    package static let name = "process"
    package static let summary = "Start, stop or restart one process."
    package static let routes: [CommandRoute] = Action.allCases.map { action in
        .post("/api/processes/{name}/\(action.rawValue)", fixed: ["action": .string(action.rawValue)])
    }
    package static let mutating = true
    package static let requestSchema: JSONValue = CommandSchema.object([
        "name": SupervisionCommands.processName,
        "action": ["enum": .array(Action.allCases.map { .string($0.rawValue) })],
    ], required: ["name", "action"])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "process": SupervisionCommands.processSchema,
        "processes": ["type": "array", "items": SupervisionCommands.processSchema, "description": "A process with replicas (named without #N): each replica."],
    ], required: ["ok"], open: true)
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [(["name": "fetcher", "action": "restart"], Answer(process: SupervisionCommands.exampleProcessInfo)),
         (["name": "fetcher", "action": "stop"], Answer(processes: [SupervisionCommands.exampleProcessInfo]))]
    }

    package static func run(_ request: Request, on host: any SupervisionCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<Answer, CommandError>) -> Void) {
        respond(host.controlProcess(request))
    }
}
