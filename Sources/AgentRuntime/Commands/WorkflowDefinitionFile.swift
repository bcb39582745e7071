import AgentBase
import AgentCommands
import AgentLoop
import AgentWork
import JSONSchema

/// The workflow definitions in the settings file the agent was started from: the definition
/// commands' host. `workflow_get` reads the file; each change is made as `settings_change`
/// makes it (the settings commands' one path: checked, written atomically keeping the
/// formatting, reloaded), whichever front sends it.
@LoopActor
final class WorkflowDefinitionFile: @LoopActor WorkflowDefinitionHost {
    private let commands: SettingsCommands
    private unowned let supervisor: Supervisor

    init(commands: SettingsCommands, supervisor: Supervisor) {
        self.commands = commands
        self.supervisor = supervisor
    }

    func workflowDefinition(named name: String, respond: @escaping (Result<WorkflowGetCommand.Answer, CommandError>) -> Void) {
        respond(commands.resource(.workflow, named: name).map { found in
            WorkflowGetCommand.Answer(name: name, definition: found.definition, hash: found.hash,
                                      version: supervisor.work.workflows?.definitions[name]?.version)
        })
    }

    /// The change made as `settings_change` makes it: the definition command's change is one of
    /// its typed changes (`add_workflow`, …), the answer `settings_change`'s.
    func changeWorkflows(_ change: WorkflowSettingsChange, respond: @escaping (Result<JSONObject, CommandError>) -> Void) {
        let action: SettingsChangeAction = switch change.action {
        case .add: .addWorkflow
        case .set: .setWorkflow
        case .remove: .removeWorkflow
        case .addStep: .addWorkflowStep
        }
        let request = SettingsChangeCommand.Request(SettingsChangeCommand.Change(action: action, name: change.name, settings: change.settings ?? [:],
                                                                                 step: change.step ?? [:], position: change.position),
                                                    ifMatch: change.ifMatch)
        commands.change(request, supervisor: supervisor) { result in
            respond(result.mapError { Self.pointed($0, change) }.flatMap { answer in
                guard let object = (try? JSONValueEncoder().encode(answer))?.objectValue else {
                    return .failure(CommandError(.failed, "the answer of the settings change of workflow \"\(change.name)\" could not be encoded"))
                }
                return .success(object)
            })
        }
    }

    /// A refusal of the settings the change would make points into the settings file, per
    /// file (`/workflows/NAME/steps/0/task`); the request's own pointer goes beside: the member
    /// of the request the first problem is in (`/definition/steps/0/task`, `/step/task`), as
    /// every other refusal of a request has one.
    nonisolated static func pointed(_ refusal: CommandError, _ change: WorkflowSettingsChange) -> CommandError {
        switch change.action {
        case .add: return SettingsResource.workflow.pointed(refusal, name: change.name, verb: .add)
        case .set: return SettingsResource.workflow.pointed(refusal, name: change.name, verb: .set)
        case .remove: return SettingsResource.workflow.pointed(refusal, name: change.name, verb: .remove)
        case .addStep:
            guard refusal.code == .invalid, refusal.pointer == nil else { return refusal }
            var pointed = refusal
            pointed.pointer = stepPointer(of: refusal.errors?.first?["pointer"]?.stringValue ?? "", change)
            return pointed
        }
    }

    /// `pointer` (in the settings) as a pointer into an `add_workflow_step` request: the
    /// step's index in the file is its position, the request has it as `step`.
    nonisolated static func stepPointer(of pointer: String, _ change: WorkflowSettingsChange) -> String {
        let steps = SettingsResource.workflow.pointer(change.name) + "/steps"
        guard pointer.hasPrefix(steps + "/"), let index = pointer.dropFirst(steps.count + 1).split(separator: "/", maxSplits: 1).first else { return "/step" }
        return "/step" + pointer.dropFirst(steps.count + 1 + index.count)
    }
}
