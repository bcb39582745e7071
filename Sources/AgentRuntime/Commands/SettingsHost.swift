import AgentBase
import AgentCommands
import AgentCore
import AgentLoop
import JSONSchema

/// The settings file a running agent was started from, as the supervisor reaches it: the
/// check a `reload` runs and the settings commands (set by the launcher; nil: refused).
@LoopActor
public final class SettingsHost {
    /// Re-reads and validates the settings for `reload` (nil: reload is refused).
    public var reloader: (() -> Result<SettingsReport, ControlError>)?
    /// The settings commands: settings_get, settings_change, validate, modules and the
    /// workflow definitions' (nil: the agent was not started from a settings file).
    var commands: SettingsCommands?
    /// The HTTP tokens and users the fronts check requests against (nil: no HTTP front);
    /// a reload replaces them.
    public var httpCredentials: HTTPCredentials?

    init() {}

    /// The settings commands, or the refusal of an agent not started from a settings file.
    func settingsCommands<Answer>(respond: (Result<Answer, CommandError>) -> Void) -> SettingsCommands? {
        if commands == nil { respond(.failure(SettingsGetCommand.unavailable)) }
        return commands
    }

    private static func unavailable(_ what: String) -> JSONValue {
        ["ok": false, "code": "unavailable", "error": .string("this agent was not started from a settings file: \(what)")]
    }
}
