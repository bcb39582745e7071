import AgentBase
import AgentLoop
import JSONSchema

/// `task_set_strategy`: the assignment strategy of the agent, or of one task.
package enum TaskSetStrategyCommand: @preconcurrency AgentCommand {
    package struct Request: Codable, Sendable {
        package var strategy: AssignmentStrategy
        /// Only this task (nil: the agent's strategy).
        package var task: String?

        package init(strategy: AssignmentStrategy, task: String? = nil) {
            self.strategy = strategy
            self.task = task
        }
    }

    package struct Answer: Encodable, Sendable {
        package let ok = true
        /// The agent's strategy and each task's.
        package var strategies: JSONValue
    }

    package static let name = "task_set_strategy"
    package static let summary = "Sets the assignment strategy of the agent, or of one task (kept in the store: it wins over the settings until changed again)."
    package static let routes: [CommandRoute] = [.post("/api/assignment/strategy")]
    package static let mutating = true
    package static let requestSchema: JSONValue = CommandSchema.object([
        "strategy": ["enum": .array(AssignmentStrategy.allCases.map { .string($0.rawValue) })],
        "task": ["type": "string", "minLength": 1, "description": "Only this task (default: the agent's strategy)."],
    ], required: ["strategy"])
    package static let answerSchema: JSONValue = CommandSchema.object(
        ["ok": ["const": true], "strategies": AssignmentCommands.strategiesSchema], required: ["ok", "strategies"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [(["strategy": "round_robin"], Answer(strategies: AssignmentCommands.exampleStrategies)),
         (["strategy": "priority_first", "task": "render"], Answer(strategies: AssignmentCommands.exampleStrategies))]
    }
    package static var unavailable: CommandError { TaskCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: TaskCoordinator, caller: CommandCaller,
                           respond: @escaping (Result<Answer, CommandError>) -> Void) {
        respond(host.setStrategy(request.strategy, task: request.task).map { Answer(strategies: $0) })
    }
}
