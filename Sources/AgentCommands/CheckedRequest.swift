import AgentBase
import JSONSchema

/// A request the registry checked against its command's schema and decoded into its command's
/// `Request` (``CommandRegistry/check(_:)``). Only the registry makes one (its initializer is
/// internal to this module), so whatever takes one — the command layer,
/// ``CommandRegistry/run(_:caller:hosts:respond:)`` — knows it valid and does not check it
/// again: every front's request is validated and decoded once, and the command runs with the
/// value the check decoded.
public struct CheckedRequest: Sendable {
    /// The command it names.
    public let command: AnyAgentCommand
    /// The request, `{"command": NAME, …}`.
    public let json: JSONValue
    /// `json` decoded: the command's `Request` (its ``AnyAgentCommand`` casts it back).
    let decoded: any Sendable

    init(command: AnyAgentCommand, json: JSONValue, decoded: any Sendable) {
        self.command = command
        self.json = json
        self.decoded = decoded
    }

    /// The command's name.
    public var name: String { command.name }
}
