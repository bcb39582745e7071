import AgentWork
import JSONSchema

/// What the HTTP front and the fuzz harnesses ask of the registry, by name and route.
public enum CommandCatalog {
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
