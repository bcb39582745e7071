import AgentBase
import AgentCommands
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
@LoopActor
final class ChatRelay: @LoopActor ChatCommandHost {
    /// A chat request waiting for the chatbot's reply.
    struct Pending {
        /// Answers with the reply's JSON and what follows it (a voice reply's spoken WAV).
        var answer: (JSONValue, ArraySlice<UInt8>?) -> Void
        var fail: (CommandError) -> Void
        var timer: Int
        /// Who asked: the `llm` adapter's tool calls for this message run as them.
        var caller: CommandCaller
        /// Bytes of partial text relayed to the caller so far (see ``relayPartial(_:)``).
        var streamed = 0
    }

    /// The most partial text relayed for one message (the worker bounds it too): past it the
    /// caller gets only the whole answer.
    static let maximumStreamedBytes = 1 << 20

    private var pending: [String: Pending] = [:]
    /// Chat requests handed to the chatbot since the start (`status` shows it).
    private(set) var sequence = 0
    private var store: AgentStore?
    private let loop: EventLoop
    private let logger: Logger
    unowned let events: any EventPublisher
    /// The agent's processes (the chatbot among them; all of them go along with each message).
    var processes: () -> [SupervisedProcess] = { [] }
    /// Carries out a `chat.command` the chatbot may send: `start`, `stop` or `restart` of a process.
    var processControl: (_ action: String, _ name: String) -> Void = { _, _ in }

    init(loop: EventLoop, logger: Logger, events: any EventPublisher) {
        self.loop = loop
        self.logger = logger
        self.events = events
    }

    /// Where the history is kept (nil: the store is off, and there is none).
    func attach(store: AgentStore?) { self.store = store }

    /// The running chatbot process, or why there is none.
    func chatbot() -> Result<SupervisedProcess, CommandError> {
        guard let bot = processes().first(where: \.isChatbot) else {
            return .failure(CommandError(.failed, "no chatbot process is configured; add one, e.g. \"chat\": {\"type\": \"chatbot\", \"logic_adapters\": [\"features\", \"status\"]}"))
        }
        guard bot.hasWorker, bot.state == .running else {
            return .failure(CommandError(.failed, "the chatbot process \(bot.name) is \(bot.state)"))
        }
        return .success(bot)
    }

    /// A new message id, and the reply awaited under it (failed after 30 s).
    func awaitReply(caller: CommandCaller, _ answer: @escaping (JSONValue, ArraySlice<UInt8>?) -> Void, fail: @escaping (CommandError) -> Void) -> String {
        sequence += 1
        let id = "\(getpid())-\(sequence)"
        let timer = loop.schedule(after: 30) { [unowned self] in
            guard let waiting = pending.removeValue(forKey: id) else { return }
            waiting.fail(CommandError(.failed, "the chatbot did not answer within 30 s"))
        }
        pending[id] = Pending(answer: answer, fail: fail, timer: timer, caller: caller)
        return id
    }

    /// Hands a message to the chatbot; answers once its reply comes back (or after 30 s).
    func send(_ request: ChatCommand.Request, adapter: String? = nil, caller: CommandCaller,
              respond: @escaping (Result<ChatCommand.Answer, CommandError>) -> Void) {
        let bot: SupervisedProcess
        switch chatbot() {
        case .success(let found): bot = found
        case .failure(let refusal): return respond(.failure(refusal))
        }
        let processes = processes()
        let conversation = request.conversation ?? "default"
        let id = awaitReply(caller: caller, { value, _ in respond(Self.reply(value, text: value["text"]?.stringValue ?? "")) }, fail: { respond(.failure($0)) })
        var fields: JSONObject = [
            "id": .string(id), "conversation": .string(conversation), "text": .string(request.text),
            "processes": .array(processes.map { SupervisedProcessInfo($0).json }),
        ]
        if let context = request.context { fields["context"] = .object(context) }
        if let adapter { fields["adapter"] = .string(adapter) }
        fields["caller"] = ChatToolBridge.describe(caller)
        events.deliver(type: RuntimeEvent.chatMessage.type, source: RuntimeEvent.chatMessage.source,
                       payload: Array(RuntimeEvent.chatMessage.payload(fields).serialized().utf8), to: bot)
        store?.recordChat(conversation: conversation, role: "user", source: "", text: request.text)
    }

    /// `chat`: the chatbot's reply.
    func chat(_ request: ChatCommand.Request, caller: CommandCaller, respond: @escaping (Result<ChatCommand.Answer, CommandError>) -> Void) {
        send(request, caller: caller, respond: respond)
    }

    /// Who sent a message still waiting for the chatbot's answer (nil: none such).
    func caller(ofMessage id: String) -> CommandCaller? { pending[id]?.caller }

    /// Asks the chatbot for a workflow's `ask` step; `answer` gets its reply's text.
    func ask(_ text: String, adapter: String?, conversation: String, answer: @escaping (Result<String, WorkflowError>) -> Void) {
        // A workflow's question has no person behind it: tools that need the admin role are refused.
        send(ChatCommand.Request(text: text, conversation: conversation), adapter: adapter, caller: CommandCaller(front: "workflow")) { reply in
            answer(reply.map(\.text).mapError { WorkflowError(code: "chat", message: $0.message) })
        }
    }

    /// `chat_clear`: forgets a conversation's history.
    func clear(_ request: ChatClearCommand.Request, respond: @escaping (Result<OKAnswer, CommandError>) -> Void) {
        guard let store else { return respond(.failure(Self.noHistory)) }
        store.clearChat(conversation: request.conversation ?? "default")
        respond(.success(OKAnswer()))
    }

    private static let noHistory = CommandError(.failed, "the store is off, so there is no chat history")

    /// Events a chatbot emits: replies go back to whoever asked; commands run when allowed.
    func botEmitted(type: String, payload: UnsafeRawBufferPointer, from bot: SupervisedProcess) {
        if type == "chat.partial" { return relayPartial(payload) }
        // A voice reply may carry its spoken WAV after the JSON and a line feed (JSON has none).
        let end = payload.firstIndex(of: 0x0A) ?? payload.endIndex
        guard type == "chat.reply" || type == "chat.command", let value = try? JSONValue.parse(UnsafeRawBufferPointer(rebasing: payload[..<end])) else { return }
        guard type == "chat.reply" else {
            guard bot.settings["allow_process_control"]?.boolValue == true,
                  let action = value["action"]?.stringValue, let name = value["name"]?.stringValue else { return }
            // As the sender of the message it answers, who needs the admin role (as over HTTP).
            guard let sender = value["message"]?.stringValue.flatMap(caller(ofMessage:)), ChatToolBridge.toolCaller(sender).role == "admin" else {
                logger.warning("\(action) of \(name) asked in the chat refused: the message's sender has not the admin role", metadata: ["process": "\(bot.name)"])
                return
            }
            logger.notice("\(action) of \(name) asked in the chat", metadata: ["process": "\(bot.name)"])
            return processControl(action, name)
        }
        let conversation = value["conversation"]?.stringValue ?? "default"
        let text = value["text"]?.stringValue ?? ""
        // A voice message refused (its `code`) joins no conversation: nothing was heard.
        if value["code"] == nil {
            if let transcript = value["transcript"]?.stringValue {
                store?.recordChat(conversation: conversation, role: "user", source: "voice", text: transcript,
                                  confidence: value["transcript_confidence"]?.numberValue?.doubleValue)
            }
            store?.recordChat(conversation: conversation, role: "bot", source: value["adapter"]?.stringValue ?? bot.name, text: text)
        }
        guard let id = value["id"]?.stringValue, let waiting = pending.removeValue(forKey: id) else { return }
        loop.cancel(waiting.timer)
        let tail = end < payload.endIndex ? Array(payload[(end + 1)...])[...] : nil
        guard let store else { return waiting.answer(value, tail) }
        // Answered once the reply is in the history, so that a history read right after the
        // answer (the dashboard's page after its redirect) shows it.
        let inbox = loop.inbox
        let answer = LoopOwned({ waiting.answer(value, tail) })
        store.whenWritten { inbox.post { answer.value() } }
    }

    /// A piece of an answer as the language model writes it (`chat.partial` {id, text}): to the
    /// caller that asked for pieces, within ``maximumStreamedBytes``; dropped otherwise (the
    /// reply still brings the whole answer).
    private func relayPartial(_ payload: UnsafeRawBufferPointer) {
        guard let value = try? JSONValue.parse(payload), let id = value["id"]?.stringValue, let text = value["text"]?.stringValue,
              var waiting = pending[id], let sink = waiting.caller.partial,
              waiting.streamed + text.utf8.count <= Self.maximumStreamedBytes else { return }
        waiting.streamed += text.utf8.count
        pending[id] = waiting
        sink(text)
    }

    /// A `chat.reply` as the answer to `chat`: its text, adapter and confidence; a reply that
    /// says `"error": true` is a refusal whose message is its text (and keeps the others).
    nonisolated static func reply(_ value: JSONValue, text: String) -> Result<ChatCommand.Answer, CommandError> {
        let answer = ChatCommand.Answer(text: text, adapter: value["adapter"]?.stringValue, confidence: value["confidence"]?.numberValue?.doubleValue)
        guard value["error"] == .bool(true) else { return .success(answer) }
        var details: JSONObject = ["text": .string(text)]
        details["adapter"] = answer.adapter.map(JSONValue.string)
        details["confidence"] = answer.confidence.map { .number(JSONNumber($0)) }
        return .failure(CommandError(.failed, text, details: details))
    }

    /// Alerts from monitors join the conversation.
    func recordAlert(source: String, level: Int, text: String) {
        guard level >= 2 else { return }
        store?.recordChat(conversation: "default", role: "alert", source: source, text: text)
    }
}
