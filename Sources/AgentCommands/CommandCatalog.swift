import AgentWork
import JSONSchema

/// The declarations of the commands not yet typed (see ``AgentCommand``): the registry
/// (``CommandRegistry``) wraps each in a legacy box run by the agent's handler for its name.
///
/// Left only for the workflow, assignment and executor commands (typed on branch cmdwork): once they
/// are typed, `legacy` is empty and this enum, the legacy box (``AnyAgentCommand/init(legacy:)``)
/// and `Supervisor.LegacyOwner` go (the integrator deletes them at the merge).
public enum CommandCatalog {
    /// Every route of the untyped commands.
    public static let legacy: [CommandDescription] = executors + workflows

    /// Every route of every command (the registry's).
    public static var all: [CommandDescription] { CommandRegistry.standard.declarations }

    /// The declaration of `name` (for routes with a fixed action, the first).
    public static func named(_ name: String) -> CommandDescription? {
        CommandRegistry.standard.command(named: name)?.declarations.first
    }

    /// Whether the command `name` changes something (audited; admin only over HTTP).
    public static func isMutating(_ name: String) -> Bool {
        CommandRegistry.standard.command(named: name)?.mutating == true
    }

    /// A process as `status` shows it.
    public static var processSchema: JSONValue { SupervisionCommands.processSchema }
}
