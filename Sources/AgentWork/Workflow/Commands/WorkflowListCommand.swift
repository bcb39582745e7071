import AgentBase
import AgentLoop
import JSONSchema

/// `workflow_list`: the workflows the settings define, with their runs going and waiting.
package enum WorkflowListCommand: @preconcurrency AgentCommand {
    package struct Answer: Encodable, Sendable {
        package let ok = true
        package var workflows: [JSONValue]
    }

    package static let name = "workflow_list"
    package static let summary = "The workflows the settings define: steps, version, input schema, trigger, runs going and waiting."
    package static let routes: [CommandRoute] = [.get("/api/workflows")]
    package static let mutating = false
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true],
        "workflows": ["type": "array", "items": CommandSchema.object([
            "name": ["type": "string"], "description": ["type": "string"], "version": ["type": "string"],
            "steps": ["type": "array", "items": ["type": "string"]], "definition": ["type": "object"], "input": [:],
            "on_event": ["type": "string"], "running": ["type": "integer"], "waiting": ["type": "integer"],
        ], required: ["name", "version", "steps"], open: true)],
    ], required: ["ok", "workflows"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [([:], Answer(workflows: [["name": "support", "version": "3f2a", "steps": ["classify", "ask"], "definition": ["steps": []],
                                   "running": 1, "waiting": 0]]))]
    }
    package static var unavailable: CommandError { WorkflowCommands.unavailable }

    @LoopActor package static func run(_ request: NoFields, on host: WorkflowEngine, caller: CommandCaller,
                           respond: @escaping (Result<Answer, CommandError>) -> Void) {
        respond(.success(Answer(workflows: host.workflowList())))
    }
}
