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
            return respond(.failure(Self.refusal(error.answer)))
        }
        let workflows = document["workflows"]?.objectValue ?? [:]
        guard let definition = workflows[name] else {
            let names = workflows.keys
            return respond(.failure(.notFound("no workflow named \"\(name)\"\(Suggestions.hint(for: name, in: names)); workflows: \(names.isEmpty ? "none" : names.joined(separator: ", "))")))
        }
        respond(.success(WorkflowGetCommand.Answer(name: name, definition: definition, hash: contents.hash,
                                                   version: supervisor.work.workflows?.definitions[name]?.version)))
    }

    func changeWorkflows(_ change: WorkflowSettingsChange, respond: @escaping (Result<JSONObject, CommandError>) -> Void) {
        let request: SettingsChangeCommand.Request
        do {
            request = try JSONValueDecoder().decode(SettingsChangeCommand.Request.self, from: JSONValueEncoder().encode(change))
        } catch {
            return respond(.failure(CommandError(.failed, "the settings change of workflow \"\(change.name)\" could not be made: \(error)")))
        }
        commands.change(request, supervisor: supervisor) { answer in
            guard case .object(let object) = answer, answer["ok"] == true else { return respond(.failure(Self.refusal(answer))) }
            respond(.success(object))
        }
    }

    /// A refusal of the settings commands (``SettingsCommandError/answer``) as the command's.
    private static func refusal(_ answer: JSONValue) -> CommandError {
        CommandError(answer["code"]?.stringValue.flatMap(CommandError.Code.init(rawValue:)) ?? .failed,
                     answer["error"]?.stringValue ?? "the settings change was refused",
                     pointer: answer["pointer"]?.stringValue, retryAfter: answer["retry_after"]?.numberValue?.intValue,
                     errors: answer["errors"]?.arrayValue)
    }
}
