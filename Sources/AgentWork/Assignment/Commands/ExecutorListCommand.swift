import AgentBase
import AgentLoop
import JSONSchema

/// `executor_list`: the executors, the strategies and the assignment's figures.
package enum ExecutorListCommand: @preconcurrency AgentCommand {
    package struct Answer: Encodable, Sendable {
        package let ok = true
        package var executors: [JSONValue]
        package var strategies: JSONValue
        package var statistics: JSONValue
    }

    package static let name = "executor_list"
    package static let summary = "The executors: state (online, busy, draining, offline), running and maximum runs, tasks, labels; the strategies and statistics (executors by state, queue by priority, waits)."
    package static let routes: [CommandRoute] = [.get("/api/executors")]
    package static let mutating = false
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "executors": ["type": "array", "items": AssignmentCommands.executorSchema],
        "strategies": AssignmentCommands.strategiesSchema, "statistics": AssignmentCommands.statisticsSchema,
    ], required: ["ok", "executors"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [([:], Answer(executors: [AssignmentCommands.exampleExecutor], strategies: AssignmentCommands.exampleStrategies,
                      statistics: ["executors": 1, "executors_by_state": ["online": 1], "queued_by_priority": ["normal": 0], "started": 3]))]
    }
    package static var unavailable: CommandError { TaskCommands.unavailable }

    @LoopActor package static func run(_ request: NoFields, on host: TaskCoordinator, caller: CommandCaller,
                           respond: @escaping (Result<Answer, CommandError>) -> Void) {
        respond(.success(host.listExecutors()))
    }
}
