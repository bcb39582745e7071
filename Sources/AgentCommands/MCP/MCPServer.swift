import AgentBase
import JSONSchema

/// The agent's commands as tools over the Model Context Protocol: JSON-RPC 2.0 messages
/// (`initialize`, `ping`, `tools/list`, `tools/call`, notifications) answered from the command
/// registry. The transport is the caller's: `agent-control mcp` (stdio, one message a line)
/// and `POST /mcp` on the HTTP front (Streamable HTTP, JSON answers).
///
/// Why not modelcontextprotocol/swift-sdk: the subset a tool server needs is these four
/// methods; the SDK would add its dependencies to every fresh clone's build (issue 41) and its
/// own transports beside the HTTP front and the control socket we already have.
public struct MCPServer: Sendable {
    /// The protocol revisions understood, newest first (an `initialize` naming another gets the newest).
    public static let protocolVersions = ["2025-06-18", "2025-03-26", "2024-11-05"]
    /// The largest message taken (bytes); a larger one is refused without being parsed.
    public static let maximumMessageBytes = 4 << 20

    /// The tools offered, in order.
    public let tools: [CommandTool]
    /// Runs a registry request (`{"command": …}`) as the client; its answer or refusal.
    let execute: @Sendable (JSONValue) async -> JSONValue
    /// Why the client may not call a tool (its role), or nil (``CommandAccess``).
    let refusal: @Sendable (CommandTool) -> CommandError?
    let version: String

    /// `tools`: the names offered (nil: every command's tools).
    public init(tools names: [String]? = nil, version: String,
                refusal: @escaping @Sendable (CommandTool) -> CommandError? = { _ in nil },
                execute: @escaping @Sendable (JSONValue) async -> JSONValue) {
        tools = names.map { $0.compactMap(CommandTools.named) } ?? CommandTools.all
        self.version = version
        self.refusal = refusal
        self.execute = execute
    }

    /// JSON-RPC error codes.
    public enum Code: Int, Sendable {
        case parse = -32700, invalidRequest = -32600, methodNotFound = -32601, invalidParams = -32602
    }

    /// The answer to one message's bytes (nil: a notification, nothing to answer).
    public func handle(bytes: some Collection<UInt8>) async -> JSONValue? {
        guard bytes.count <= Self.maximumMessageBytes else {
            return Self.error(nil, .invalidRequest, "the message is \(bytes.count) bytes; at most \(Self.maximumMessageBytes) are taken")
        }
        let message: JSONValue
        do {
            message = try JSONValue.parse(Array(bytes))
        } catch {
            return Self.error(nil, .parse, "the message is not JSON: \(error)")
        }
        return await handle(message)
    }

    /// The answer to one parsed message (nil: a notification).
    public func handle(_ message: JSONValue) async -> JSONValue? {
        if message.arrayValue != nil {
            return Self.error(nil, .invalidRequest, "batches are not taken (MCP 2025-06-18 removed them); send one message at a time")
        }
        guard case .object(let object) = message else {
            return Self.error(nil, .invalidRequest, "a message must be a JSON-RPC 2.0 object; found \(Describe.article(message))")
        }
        let id = object["id"]
        if let id, id.stringValue == nil, id.numberValue == nil {
            return Self.error(nil, .invalidRequest, "\"id\" must be a string or a number; found \(Describe.article(id))")
        }
        guard object["jsonrpc"] == "2.0", let method = object["method"]?.stringValue else {
            // A response from the client (to nothing we asked) or junk: answered only when it has an id.
            guard let id, object["result"] == nil, object["error"] == nil else { return nil }
            return Self.error(id, .invalidRequest, "expected {\"jsonrpc\": \"2.0\", \"method\": …}")
        }
        guard let id else { return nil }  // notifications/initialized, cancelled…: nothing to answer
        let params = object["params"] ?? [:]
        guard params.objectValue != nil else {
            return Self.error(id, .invalidParams, "\"params\" must be an object; found \(Describe.article(params))")
        }
        switch method {
        case "initialize": return Self.result(id, initialize(params))
        case "ping": return Self.result(id, [:])
        case "tools/list": return Self.result(id, ["tools": .array(tools.map(Self.describe))])
        case "tools/call": return await call(id, params)
        default: return Self.error(id, .methodNotFound, "unknown method \"\(method.prefix(100))\"; this server answers initialize, ping, tools/list and tools/call")
        }
    }

    private func initialize(_ params: JSONValue) -> JSONValue {
        let asked = params["protocolVersion"]?.stringValue ?? ""
        return [
            "protocolVersion": .string(Self.protocolVersions.contains(asked) ? asked : Self.protocolVersions[0]),
            "capabilities": ["tools": ["listChanged": false]],
            "serverInfo": ["name": "agent-runtime", "version": .string(version)],
            "instructions": "The agent's commands as tools; each is checked, authorised and audited like a request to its HTTP API.",
        ]
    }

    private static func describe(_ tool: CommandTool) -> JSONValue {
        ["name": .string(tool.name), "description": .string(tool.description), "inputSchema": tool.inputSchema,
         "annotations": ["readOnlyHint": .bool(!tool.mutating), "destructiveHint": .bool(tool.mutating)]]
    }

    private func call(_ id: JSONValue, _ params: JSONValue) async -> JSONValue {
        guard let name = params["name"]?.stringValue else {
            return Self.error(id, .invalidParams, "tools/call needs \"name\": a tool of tools/list")
        }
        guard let tool = tools.first(where: { $0.name == name }) else {
            return Self.error(id, .invalidParams, "unknown tool \"\(name.prefix(100))\"\(Suggestions.hint(for: String(name.prefix(100)), in: tools.map(\.name))); see tools/list")
        }
        let arguments = params["arguments"] ?? [:]
        guard case .object(let members) = arguments else {
            return Self.error(id, .invalidParams, "\"arguments\" must be an object; found \(Describe.article(arguments))")
        }
        if let refused = refusal(tool) { return Self.result(id, Self.toolResult(refused.json)) }
        switch tool.request(members) {
        case .failure(let refused): return Self.result(id, Self.toolResult(refused.json))
        case .success(let request): return Self.result(id, Self.toolResult(await execute(request)))
        }
    }

    /// A command's answer as a tool result: the JSON as text and as structured content; a
    /// refusal is a result with `isError` (the model or person reads why), not a protocol error.
    static func toolResult(_ answer: JSONValue) -> JSONValue {
        ["content": [["type": "text", "text": .string(answer.serialized())]],
         "structuredContent": answer, "isError": .bool(answer["ok"]?.boolValue != true)]
    }

    static func result(_ id: JSONValue, _ result: JSONValue) -> JSONValue {
        ["jsonrpc": "2.0", "id": id, "result": result]
    }

    /// A JSON-RPC error answer (`id` null when the request's could not be read).
    public static func error(_ id: JSONValue?, _ code: Code, _ message: String) -> JSONValue {
        ["jsonrpc": "2.0", "id": id ?? .null, "error": ["code": .number(JSONNumber(code.rawValue)), "message": .string(message)]]
    }
}
