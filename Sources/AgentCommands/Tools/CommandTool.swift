import AgentBase
import JSONSchema

/// One of the agent's commands offered as a tool to a language model (the chatbot's `llm`
/// adapter) or an MCP client: its name, what it does, and its parameters — the command's own
/// request schema from the registry, so a tool call is checked like any front's request.
///
/// A command whose routes fix a member (`process`: `action` start, stop, restart) is one tool
/// per route (`process_start`, `process_stop`, `process_restart`), each without that member.
public struct CommandTool: Sendable {
    /// `status`, `task_run`, `process_restart`.
    public let name: String
    public let description: String
    /// A JSON Schema object: the command's request without `command` and the fixed members.
    public let inputSchema: JSONValue
    /// The registry's command it runs.
    public let command: AnyAgentCommand
    /// The members the tool fixes (`"action": "restart"`).
    public let fixed: JSONObject

    init(command: AnyAgentCommand, declaration: CommandDescription, named name: String) {
        self.name = name
        self.command = command
        let fixed = declaration.fixed
        self.fixed = fixed
        inputSchema = declaration.request
        var text = command.summary
        if !fixed.isEmpty { text += " (" + fixed.keys.sorted().map { "\($0): \(fixed[$0]!.stringValue ?? fixed[$0]!.serialized())" }.joined(separator: ", ") + ")" }
        if command.requiresAdmin { text += " Needs the admin role." }
        description = text
    }

    /// Whether it changes something (a chat asks the person to confirm it first).
    public var mutating: Bool { command.mutating }

    /// The registry request of a call with `arguments`: the arguments, the fixed members and
    /// `command`; refused when the arguments name `command` or contradict a fixed member.
    public func request(_ arguments: JSONObject) -> Result<JSONValue, CommandError> {
        var request = arguments
        if arguments["command"] != nil {
            return .failure(.invalid("/command: the tool \(name) names its command itself; leave \"command\" out of its arguments", pointer: "/command"))
        }
        for (key, value) in fixed {
            if let given = arguments[key], given != value {
                return .failure(.invalid("/\(key): the tool \(name) fixes it to \(value.serialized()); leave it out", pointer: "/" + key))
            }
            request[key] = value
        }
        request["command"] = .string(command.name)
        return .success(.object(request))
    }

    /// `{"name", "description", "parameters"}`: a function of the chat-completions protocol.
    public var function: JSONValue {
        ["name": .string(name), "description": .string(description), "parameters": inputSchema]
    }
}

/// Every command as tools (see ``CommandTool``), in the registry's order.
public enum CommandTools {
    public static let all: [CommandTool] = CommandRegistry.standard.commands.flatMap { command -> [CommandTool] in
        command.declarations.map { declaration in
            let suffix = declaration.fixed.keys.sorted().compactMap { declaration.fixed[$0]?.stringValue }.joined(separator: "_")
            return CommandTool(command: command, declaration: declaration, named: suffix.isEmpty ? command.name : command.name + "_" + suffix)
        }
    }.reduce(into: [CommandTool]()) { tools, tool in
        // A command with several routes and nothing fixed (one request, two paths) is one tool.
        if !tools.contains(where: { $0.name == tool.name }) { tools.append(tool) }
    }

    private static let byName = Dictionary(all.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })

    public static func named(_ name: String) -> CommandTool? { byName[name] }

    /// Every tool's name.
    public static var names: [String] { all.map(\.name) }

    /// Tools a language model in the chat may not be given: `chat`, a voice message, the history
    /// and a summary would ask the chatbot that is waiting for the model's answer (its worker's
    /// one thread: each call would wait its 30 s out).
    public static let notForChat: Set<String> = ["chat", "chat_clear", "chat_history", "chat_voice", "chat_summary"]
}
