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
        let contents: SettingsFile.Contents
        let document: JSONValue
        do throws(SettingsCommandError) {
            contents = try commands.file.read()
            do {
                document = try JSONValue.parse(contents.bytes)
            } catch {
                throw SettingsCommandError(.unavailable, "\(commands.shownPath) is not valid JSON (line \(error.line), column \(error.column): \(error.message))")
            }
        } catch {
            return respond(.failure(error.refusal))
        }
        let workflows = document["workflows"]?.objectValue ?? [:]
        guard let definition = workflows[name] else {
            let names = workflows.keys
            return respond(.failure(.notFound("no workflow named \"\(name)\"\(Suggestions.hint(for: name, in: names)); workflows: \(names.isEmpty ? "none" : names.joined(separator: ", "))")))
        }
        respond(.success(WorkflowGetCommand.Answer(name: name, definition: definition, hash: contents.hash,
                                                   version: supervisor.work.workflows?.definitions[name]?.version)))
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
            respond(result.flatMap { answer in
                guard let object = (try? JSONValueEncoder().encode(answer))?.objectValue else {
                    return .failure(CommandError(.failed, "the answer of the settings change of workflow \"\(change.name)\" could not be encoded"))
                }
                return .success(object)
            })
        }
    }
}
