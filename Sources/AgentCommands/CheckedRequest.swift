import AgentBase
import JSONSchema

/// A request the registry checked against its command's schema (``CommandRegistry/check(_:)``).
/// Only the registry makes one (its initializer is internal to this module), so whatever takes
/// one — the command layer, ``CommandRegistry/run(_:caller:hosts:respond:)`` — knows it valid
/// and does not check it again: every front's request is validated once.
public struct CheckedRequest: Sendable {
    /// The command it names.
    public let command: AnyAgentCommand
    /// The request, `{"command": NAME, …}`.
    public let json: JSONValue

    init(command: AnyAgentCommand, json: JSONValue) {
        self.command = command
        self.json = json
    }

    /// The command's name.
    public var name: String { command.name }
}
