import AgentBase
import AgentLoop
import AgentStore
import AgentSupervision
import AgentWork
import Foundation
import JSONSchema
import Logging

/// Between the fronts and the chatbot process: a chat request goes to the chatbot as a
/// `chat.message` event and is answered once its `chat.reply` comes back (or after 30 s); the
/// conversation, the replies and the monitors' alerts are kept in the store's chat history.
///
/// Loop thread only.
final class ChatRelay {
    /// A chat request waiting for the chatbot's reply.
    private struct Pending {
        var respond: (JSONValue) -> Void
        var timer: Int
    }

    private var pending: [String: Pending] = [:]
    /// Chat requests handed to the chatbot since the start (`status` shows it).
    private(set) var sequence = 0
    private var store: AgentStore?
    private let loop: EventLoop
    private let logger: Logger
    private unowned let events: any EventPublisher
    private let queries: QueryHost
    /// The agent's processes (the chatbot among them; all of them go along with each message).
    var processes: () -> [SupervisedProcess] = { [] }
    /// Carries out a `chat.command` the chatbot may send: `start`, `stop` or `restart` of a process.
    var processControl: (_ action: String, _ name: String) -> Void = { _, _ in }

    init(loop: EventLoop, logger: Logger, events: any EventPublisher, queries: QueryHost) {
        self.loop = loop
        self.logger = logger
        self.events = events
        self.queries = queries
    }

    /// Where the history is kept (nil: the store is off, and there is none).
    func attach(store: AgentStore?) { self.store = store }

    /// Answers `chat`, `chat_history` or `chat_clear` on the loop (`respond` is called there).
    func answer(_ request: JSONValue, respond: @escaping (JSONValue) -> Void) {
        switch request["command"]?.stringValue {
        case "chat_history"?: history(request, respond: respond)
        case "chat_clear"?: clear(request, respond: respond)
        default: send(request, respond: respond)
        }
    }

    /// Hands a message to the chatbot; answers once its reply comes back (or after 30 s).
    func send(_ request: JSONValue, respond: @escaping (JSONValue) -> Void) {
        guard let text = request["text"]?.stringValue, !text.isEmpty else { return respond(["ok": false, "error": "a chat request needs \"text\""]) }
        let processes = processes()
        guard let bot = processes.first(where: \.isChatbot) else {
            return respond(["ok": false, "error": "no chatbot process is configured; add one, e.g. \"chat\": {\"type\": \"chatbot\", \"logic_adapters\": [\"features\", \"status\"]}"])
        }
        guard bot.hasWorker, bot.state == .running else {
            return respond(["ok": false, "error": .string("the chatbot process \(bot.name) is \(bot.state)")])
        }
        let conversation = request["conversation"]?.stringValue ?? "default"
        sequence += 1
        let id = "\(getpid())-\(sequence)"
        var fields: JSONObject = [
            "id": .string(id), "conversation": .string(conversation), "text": .string(text),
            "processes": .array(processes.map { SupervisedProcessInfo($0).json }),
        ]
        if let context = request["context"], context != .null {
            guard context.objectValue != nil else {
                return respond(["ok": false, "code": "invalid", "pointer": "/context", "error": .string("\"context\" must be an object; found \(Describe.article(context))")])
            }
            fields["context"] = context
        }
        if let adapter = request["adapter"]?.stringValue { fields["adapter"] = .string(adapter) }
        events.deliver(type: "chat.message", source: "control", payload: Array(JSONValue.object(fields).serialized().utf8), to: bot)
        store?.recordChat(conversation: conversation, role: "user", source: "", text: text)
        let timer = loop.schedule(after: 30) { [unowned self] in
            guard let waiting = pending.removeValue(forKey: id) else { return }
            waiting.respond(["ok": false, "error": "the chatbot did not answer within 30 s"])
        }
        pending[id] = Pending(respond: respond, timer: timer)
    }

    /// Asks the chatbot for a workflow's `ask` step; `answer` gets its reply's text.
    func ask(_ text: String, adapter: String?, conversation: String, answer: @escaping (Result<String, WorkflowError>) -> Void) {
        var request: JSONObject = ["command": "chat", "text": .string(text), "conversation": .string(conversation)]
        if let adapter { request["adapter"] = .string(adapter) }
        send(.object(request)) { reply in
            if reply["ok"]?.boolValue == true, let text = reply["text"]?.stringValue {
                answer(.success(text))
            } else {
                answer(.failure(WorkflowError(code: "chat", message: reply["error"]?.stringValue ?? "the chatbot did not answer")))
            }
        }
    }

    /// `chat_history`: a conversation's lines after `after`, at most `limit`.
    func history(_ request: JSONValue, respond: @escaping (JSONValue) -> Void) {
        let conversation = request["conversation"]?.stringValue ?? "default"
        let after = request["after"]?.numberValue?.intValue ?? 0
        let limit = request["limit"]?.numberValue?.intValue ?? 100
        let submitted = queries.submit(sql: "SELECT * FROM (SELECT id, time, role, source, text FROM chat WHERE conversation = ? AND id > ? ORDER BY id DESC LIMIT ?) ORDER BY id",
                                       params: [.string(conversation), .number(JSONNumber(after)), .number(JSONNumber(limit))]) { result in
            switch result {
            case .success(let rows): respond(["ok": true, "lines": rows])
            case .failure(let problem): respond(["ok": false, "error": .string(problem.description)])
            }
        }
        if !submitted { respond(["ok": false, "error": "the store is off, so there is no chat history"]) }
    }

    /// `chat_clear`: forgets a conversation's history.
    func clear(_ request: JSONValue, respond: @escaping (JSONValue) -> Void) {
        guard let store else { return respond(["ok": false, "error": "the store is off, so there is no chat history"]) }
        store.clearChat(conversation: request["conversation"]?.stringValue ?? "default")
        respond(["ok": true])
    }

    /// Events a chatbot emits: replies go back to whoever asked; commands run when allowed.
    func botEmitted(type: String, payload: UnsafeRawBufferPointer, from bot: SupervisedProcess) {
        guard type == "chat.reply" || type == "chat.command", let value = try? JSONValue.parse(payload) else { return }
        guard type == "chat.reply" else {
            guard bot.settings["allow_process_control"]?.boolValue == true,
                  let action = value["action"]?.stringValue, let name = value["name"]?.stringValue else { return }
            logger.notice("\(action) of \(name) asked in the chat", metadata: ["process": "\(bot.name)"])
            return processControl(action, name)
        }
        let conversation = value["conversation"]?.stringValue ?? "default"
        let text = value["text"]?.stringValue ?? ""
        store?.recordChat(conversation: conversation, role: "bot", source: value["adapter"]?.stringValue ?? bot.name, text: text)
        guard let id = value["id"]?.stringValue, let waiting = pending.removeValue(forKey: id) else { return }
        loop.cancel(waiting.timer)
        var answer: JSONObject = ["ok": .bool(value["error"] != .bool(true)), "text": .string(text)]
        if value["error"] == .bool(true) { answer["error"] = .string(text) }
        if let adapter = value["adapter"] { answer["adapter"] = adapter }
        if let confidence = value["confidence"] { answer["confidence"] = confidence }
        guard let store else { return waiting.respond(.object(answer)) }
        // Answered once the reply is in the history, so that a history read right after the
        // answer (the dashboard's page after its redirect) shows it.
        let inbox = loop.inbox
        let respond = LoopBound(value: waiting.respond)
        let reply = JSONValue.object(answer)
        store.whenWritten { inbox.post { respond.value(reply) } }
    }

    /// Alerts from monitors join the conversation.
    func recordAlert(source: String, level: Int, text: String) {
        guard level >= 2 else { return }
        store?.recordChat(conversation: "default", role: "alert", source: source, text: text)
    }
}
