import AgentBase
import JSONSchema

/// A task command on one run by its id (`task_show`, `task_cancel`): the same
/// request, answer, schemas and examples; each says what it does with the run.
package protocol TaskRunReferenceCommand: AgentCommand
where Request == TaskRunReference, Answer == TaskRunAnswer, Host == TaskCoordinator {}

extension TaskRunReferenceCommand {
    package static var requestSchema: JSONValue { TaskCommands.runRequest }
    package static var answerSchema: JSONValue { TaskCommands.runAnswer }
    package static var examples: [(request: JSONValue, answer: TaskRunAnswer)] {
        [(["id": "r1"], TaskRunAnswer(json: TaskCommands.exampleRun))]
    }
    package static var unavailable: CommandError { TaskCommands.unavailable }
}
