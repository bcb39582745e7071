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
    /// of the request the first problem is in (`/definition/steps/0/task`), as every other
    /// refusal of a request has one.
    nonisolated static func pointed(_ refusal: CommandError, _ change: WorkflowSettingsChange) -> CommandError {
        guard refusal.code == .invalid, refusal.pointer == nil else { return refusal }
        var pointed = refusal
        pointed.pointer = requestPointer(of: refusal.errors?.first?["pointer"]?.stringValue ?? "", change)
        return pointed
    }

    /// `pointer` (in the settings) as a pointer into the request of `change`.
    nonisolated static func requestPointer(of pointer: String, _ change: WorkflowSettingsChange) -> String {
        let workflow = "/workflows/" + JSONPointer.escape(change.name)
        func below(_ prefix: String) -> Substring? {
            pointer == prefix ? "" : pointer.hasPrefix(prefix + "/") ? pointer.dropFirst(prefix.count) : nil
        }
        switch change.action {
        case .add, .set:
            return "/definition" + (below(workflow) ?? "")
        case .addStep:
            // The step's index in the file is its position: the request has it as `step`.
            guard let rest = below(workflow + "/steps"), let index = rest.dropFirst().split(separator: "/", maxSplits: 1).first else { return "/step" }
            return "/step" + rest.dropFirst(1 + index.count)
        case .remove:
            return "/name"
        }
    }
}
