import AgentBase
import AgentCommands
import AgentCore
import AgentLoop
import AgentSupervision
import AgentWork
import Foundation
import JSONSchema

/// The chat's front of the command registry: the chatbot's `llm` adapter asks, in `chatTool`
/// frames, for its tools' descriptions and runs them, each for a message still waiting for its
/// answer. A call runs as that message's sender (``ChatRelay`` keeps who it was): their role
/// decides (``CommandAccess``), the registry validates the arguments as it does any front's
/// request, and the supervisor's `execute` audits it with the front `chat`. Only tools the
/// chatbot's settings list for an `llm` adapter are run: a worker cannot widen its own list.
@LoopActor
final class ChatToolBridge {
    private unowned let events: any EventPublisher
    /// Who sent a message still waiting for its answer (nil: no such message waits).
    var sender: (String) -> CommandCaller? = { _ in nil }
    /// Runs a checked request as a caller; mutating ones are audited (the supervisor's `execute`).
    var execute: (CheckedRequest, CommandCaller, @escaping (JSONValue) -> Void) -> Void = { _, _, respond in respond(CommandAnswer.stopping) }
    /// Writes a refused call's audit line.
    var audit: (JSONValue, CommandCaller, JSONValue) -> Void = { _, _, _ in }
    /// A call answered (the message's id, the tool, the answer): kept in its conversation.
    var called: (String, String, JSONValue) -> Void = { _, _, _ in }

    init(events: any EventPublisher) { self.events = events }

    /// The sender as the chatbot sees it (`{"front", "user", "role"}`), for its prompt and its
    /// confirmations; the authorisation is made here, from ``ChatRelay``'s own record.
    nonisolated static func describe(_ caller: CommandCaller) -> JSONValue {
        var object: JSONObject = ["front": .string(caller.front)]
        object["user"] = (caller.user ?? caller.peerUser).map(JSONValue.string)
        object["role"] = toolCaller(caller).role.map(JSONValue.string)
        return .object(object)
    }

    /// The caller a tool call runs as: the sender, on the `chat` front; the control socket's
    /// operator has the admin role (as every socket request does), a workflow's question none.
    nonisolated static func toolCaller(_ sender: CommandCaller) -> CommandCaller {
        CommandCaller(front: "chat", user: sender.user, address: sender.address,
                      role: sender.role ?? (sender.front == "control" ? "admin" : nil))
    }

    /// The tools the chatbot's settings give its `llm` adapters.
    nonisolated static func allowedTools(_ settings: JSONObject) -> Set<String> {
        var names = Set<String>()
        for adapter in settings["logic_adapters"]?.arrayValue ?? [] where adapter["type"]?.stringValue == "llm" {
            for tool in adapter["tools"]?.arrayValue ?? [] { if let name = tool.stringValue { names.insert(name) } }
        }
        return names.subtracting(CommandTools.notForChat)
    }

    /// Answers one `chatTool` frame (now, or once its command has answered).
    func answer(_ body: UnsafeRawBufferPointer, from process: SupervisedProcess) throws {
        guard let (id, json) = QueryFrame.parseRequest(body) else { throw FrameError("chat-tool frame of \(body.count) bytes") }
        let pid = process.pid
        let reply = { [self] (answer: JSONValue) in replyToWorker(process, pid: pid, id: id, answer) }
        guard process.isChatbot else { return reply(Self.refusal("only the chatbot's llm adapters call tools")) }
        guard let request = try? JSONValue.parse(json), let message = request["message"]?.stringValue else {
            return reply(Self.refusal("a chat-tool request is {\"message\", \"describe\"} or {\"message\", \"call\"} as JSON"))
        }
        guard let sender = sender(message) else {
            return reply(Self.refusal("the message \(message.prefix(40)) no longer waits for its answer (the chat waits 30 s): nothing was run"))
        }
        let allowed = Self.allowedTools(process.settings)
        if let names = request["describe"]?.arrayValue {
            let tools = names.compactMap(\.stringValue).filter(allowed.contains).compactMap(CommandTools.named)
            return reply(["ok": true, "tools": .array(tools.map { tool in
                ["name": .string(tool.name), "description": .string(tool.description), "parameters": tool.inputSchema, "mutating": .bool(tool.mutating)]
            })])
        }
        let tool = request["call"]?["name"]?.stringValue ?? "?"
        call(request["call"] ?? .null, allowed: allowed, as: Self.toolCaller(sender)) { [self] answer in
            called(message, String(tool.prefix(100)), answer)
            reply(answer)
        }
    }

    /// Runs one call through the registry as `caller`; `reply` gets the answer or refusal.
    private func call(_ call: JSONValue, allowed: Set<String>, as caller: CommandCaller, reply: @escaping (JSONValue) -> Void) {
        guard let name = call["name"]?.stringValue, case .object(let arguments)? = call["arguments"] else {
            return reply(Self.refusal("a call is {\"name\", \"arguments\": {…}}"))
        }
        guard allowed.contains(name), let tool = CommandTools.named(name) else {
            return reply(Self.refusal("\"\(name.prefix(100))\" is not a tool of this chatbot's llm adapters (their \"tools\": \(allowed.sorted().joined(separator: ", ")))"))
        }
        let request: JSONValue
        switch tool.request(arguments) {
        case .failure(let refusal): return reply(refusal.json)
        case .success(let made): request = made
        }
        if let refused = CommandAccess.refusal(tool.command, caller: caller) {
            audit(request, caller, refused.json)
            return reply(refused.json)
        }
        switch CommandRegistry.standard.check(request) {
        case .failure(let refusal): reply(refusal.json)
        case .success(let checked): execute(checked, caller, reply)
        }
    }

    /// Sends the answer to the worker that asked (not to one started since in its place).
    private func replyToWorker(_ process: SupervisedProcess, pid: pid_t, id: UInt64, _ answer: JSONValue) {
        guard process.hasWorker, process.pid == pid else { return }
        events.send(.chatToolResult, body: QueryFrame.result(id: id, ok: true, answer.serializedBytes()), to: process)
    }

    nonisolated static func refusal(_ text: String) -> JSONValue { CommandError(.forbidden, text).json }
}
