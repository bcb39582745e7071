import AgentBase
import AgentLoop
import AgentWork
import JSONSchema

/// Every command of the agent, by name: what the control socket, the HTTP API (its routes,
/// its access checks, its OpenAPI document) and the dashboard know of commands comes from
/// here. Each front validates a request with ``check(_:)`` and answers its refusal the same
/// way; every command is typed (``AgentCommand``), decoded and run by
/// ``run(_:caller:hosts:respond:)``, which takes only a ``CheckedRequest``.
public final class CommandRegistry: Sendable {
    /// In the order of the catalog (the OpenAPI document's order).
    public let commands: [AnyAgentCommand]
    private let byName: [String: Int]

    init(_ commands: [AnyAgentCommand]) {
        self.commands = commands
        byName = Dictionary(commands.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The agent's commands, as each layer contributes them (see ``TypedCommands``): the
    /// supervision, chat, configuration and store commands first, then the features'.
    public static let standard = CommandRegistry(TypedCommands.all.map { command in
        (command as? any StoreReadCommand.Type).map { AnyAgentCommand(storeRead: $0) } ?? AnyAgentCommand(command)
    })

    /// Every command's name (what the control socket's did-you-mean offers).
    public var names: [String] { commands.map(\.name) }

    /// Every route's declaration (the HTTP routes and the OpenAPI document).
    public var declarations: [CommandDescription] { commands.flatMap(\.declarations) }

    public func command(named name: String) -> AnyAgentCommand? { byName[name].map { commands[$0] } }

    /// `request` (`{"command": NAME, …}`) checked, when it names a command and its members are
    /// valid; else the refusal every front answers.
    public func check(_ request: JSONValue) -> Result<CheckedRequest, CommandError> {
        var known: String { names.joined(separator: ", ") }
        guard case .object(var fields) = request else {
            return .failure(.invalid("a request must be a JSON object with a \"command\" string (\(known)); found \(Describe.article(request))", pointer: ""))
        }
        guard let value = fields["command"] else {
            return .failure(.invalid("the request has no \"command\"; expected a string: \(known)", pointer: "/command"))
        }
        guard let name = value.stringValue else {
            return .failure(.invalid("\"command\" must be a string (\(known)); found \(Describe.article(value)) (\(value.serialized()))", pointer: "/command"))
        }
        guard let command = command(named: name) else {
            return .failure(.invalid("unknown command \"\(name)\"\(Suggestions.hint(for: name, in: names)); known: \(known)", pointer: "/command"))
        }
        fields["command"] = nil
        return command.checked(fields).map { CheckedRequest(command: command, json: request, decoded: $0) }
    }

    /// The members of a request for `command` (without `command`: an HTTP route knows its
    /// command) checked as ``check(_:)`` checks them.
    public func check(_ fields: JSONObject, for command: AnyAgentCommand) -> Result<CheckedRequest, CommandError> {
        command.checked(fields).map { decoded in
            var request = fields
            request["command"] = .string(command.name)
            return CheckedRequest(command: command, json: .object(request), decoded: decoded)
        }
    }

    /// Runs a checked request; the answer goes to `respond` (now or later, on the loop). Checked
    /// once, by ``check(_:)``: a command relies on its schema's bounds (a `limit` of at least 1,
    /// a non-empty `error`) that decoding alone does not hold.
    @LoopActor package func run(_ request: CheckedRequest, caller: CommandCaller, hosts: any CommandHosts, respond: @escaping (JSONValue) -> Void) {
        request.command.invoke(request.decoded, caller, hosts, respond)
    }
}
