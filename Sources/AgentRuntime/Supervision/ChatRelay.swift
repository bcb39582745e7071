import AgentBase
import AgentCommands
import AgentCore
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
        /// The conversation and the user the message's lines are kept under.
        var conversation: String
        var user: String
        /// False for a question of the relay's own (the `llm` adapter's summary): kept nowhere.
        var kept = true
        /// Bytes of partial text relayed to the caller so far (see ``relayPartial(_:)``).
        var streamed = 0
    }

    /// How long a chat request waits for the chatbot's reply. The message carries the instant
    /// (`deadline`, CLOCK_MONOTONIC seconds): the chatbot does not answer one still queued then,
    /// and gives its adapters no longer.
    static let replyTimeout = 30.0

    /// The most partial text relayed for one message (the worker bounds it too): past it the
    /// caller gets only the whole answer.
    static let maximumStreamedBytes = 1 << 20
    /// The chatbot's event carrying a piece of a streamed answer (the `llm` adapter's).
    static let partialType = "chat.partial"

    var pending: [String: Pending] = [:]
    /// Chat requests handed to the chatbot since the start (`status` shows it).
    private(set) var sequence = 0
    private(set) var store: AgentStore?
    /// Users' preferences as last read or written (every message carries its sender's).
    var preferences: [String: ChatPreferences] = [:]
    /// Users whose preferences are being read, with what waits for them.
    var loadingPreferences: [String: [(ChatPreferences) -> Void]] = [:]
    /// Users whose preferences are being changed, with the changes that wait for it: one
    /// change of a user's at a time, each reading what the one before wrote (see
    /// ``setPreferences(_:user:respond:)``).
    var changingPreferences: [String: [() -> Void]] = [:]
    let loop: EventLoop
    private let logger: Logger
    /// Alerts each source may still put in the chat, refilled with time (see ``recordAlert``).
    var alertAllowance: [String: RateAllowance] = [:]
    unowned let events: any EventPublisher
    /// The agent's processes (the chatbot among them; all of them go along with each message).
    var processes: () -> [SupervisedProcess] = { [] }
    /// Carries out a `chat.command` the chatbot may send: `start`, `stop` or `restart` of a process.
    var processControl: (_ action: String, _ name: String) -> Void = { _, _ in }
    /// The chatbot's language-model tool calls, run through the registry as the sender of the
    /// message they answer (see ``ChatToolBridge``); each call is kept with its message.
    let tools: ChatToolBridge

    init(loop: EventLoop, logger: Logger, events: any EventPublisher) {
        self.loop = loop
        self.logger = logger
        self.events = events
        tools = ChatToolBridge(events: events)
        tools.sender = { [unowned self] message in caller(ofMessage: message) }
        tools.called = { [unowned self] message, tool, answer in recordTool(message: message, tool: tool, answer: answer) }
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
    func awaitReply(caller: CommandCaller, conversation: String, user: String, kept: Bool = true,
                    _ answer: @escaping (JSONValue, ArraySlice<UInt8>?) -> Void, fail: @escaping (CommandError) -> Void) -> String {
        sequence += 1
        let id = "\(getpid())-\(sequence)"
        let timer = loop.schedule(after: Self.replyTimeout) { [unowned self] in
            guard let waiting = pending.removeValue(forKey: id) else { return }
            // The chatbot busy, not the request wrong: 503 over HTTP, as for a stopped chatbot.
            waiting.fail(CommandError(.unavailable, "the chatbot did not answer within \(Int(Self.replyTimeout)) s (busy with slower messages, or stuck); try again"))
        }
        pending[id] = Pending(answer: answer, fail: fail, timer: timer, caller: caller, conversation: conversation, user: user, kept: kept)
        return id
    }

    /// Hands a message to the chatbot, from its sender (``ChatUser``) with their preferences in
    /// its context; answers once its reply comes back (or after 30 s). `kept: false`: a
    /// question of the relay's own, written to no conversation.
    func send(_ request: ChatCommand.Request, adapter: String? = nil, caller: CommandCaller,
              respond: @escaping (Result<ChatCommand.Answer, CommandError>) -> Void) {
        let user: String
        switch (chatbot().map({ _ in () }), ChatUser.sender(requested: request.user, context: request.context, caller: caller)) {
        case (.failure(let refusal), _), (_, .failure(let refusal)): return respond(.failure(refusal))
        case (.success, .success(let sender)): user = sender
        }
        withPreferences(of: user) { [self] preferences in
            deliver(request.text, conversation: request.conversation ?? "default", user: user,
                    context: Self.context(request.context, user: user, preferences: preferences), adapter: adapter, caller: caller,
                    answer: { value in respond(Self.reply(value, text: value["text"]?.stringValue ?? "")) }, fail: { respond(.failure($0)) })
        }
    }

    /// Hands one message to the running chatbot as a `chat.message` event; `answer` gets its
    /// reply. `kept: false`: a question of the relay's own (`purpose`), kept in no conversation.
    func deliver(_ text: String, conversation: String, user: String, context: JSONObject, adapter: String?, purpose: String? = nil,
                 caller: CommandCaller, kept: Bool = true, answer: @escaping (JSONValue) -> Void, fail: @escaping (CommandError) -> Void) {
        // The chatbot may have stopped while the preferences were read.
        let bot: SupervisedProcess
        switch chatbot() {
        case .success(let found): bot = found
        case .failure(let refusal): return fail(refusal)
        }
        let id = awaitReply(caller: caller, conversation: conversation, user: user, kept: kept, { value, _ in answer(value) }, fail: fail)
        var fields: JSONObject = [
            "id": .string(id), "conversation": .string(conversation), "text": .string(text),
            "processes": .array(processes().map { SupervisedProcessInfo($0).json }), "context": .object(context),
            "deadline": .number(JSONNumber(EventLoop.now() + Self.replyTimeout)),
        ]
        if let adapter { fields["adapter"] = .string(adapter) }
        if let purpose { fields["purpose"] = .string(purpose) }
        fields["caller"] = ChatToolBridge.describe(caller)
        let payload = RuntimeEvent.chatMessage.payload(fields).serializedBytes()
        if let refusal = hand(payload, type: RuntimeEvent.chatMessage.type, id: id, to: bot, pointer: "/context") { return fail(refusal) }
        if kept { store?.recordChat(conversation: conversation, user: user, role: "user", source: "", text: text) }
    }

    /// Delivers a message (`chat.message`, `chat.voice`) to the chatbot, or refuses it when one
    /// frame cannot carry it: the worker reads at most ``FrameCodec/maxFrameLength`` bytes a
    /// frame and loses its channel on a larger one (a big `context` over a raised
    /// `http.max_body_bytes` would take the chat down). The reply awaited as `id` is given up.
    func hand(_ payload: [UInt8], type: String, id: String, to bot: SupervisedProcess, pointer: String) -> CommandError? {
        let source = RuntimeEvent.chatMessage.source
        let length = EventFrame.deliveryLength(typeCount: type.utf8.count, sourceCount: source.utf8.count, payloadCount: payload.count)
        guard length <= FrameCodec.maxFrameLength else {
            if let waiting = pending.removeValue(forKey: id) { loop.cancel(waiting.timer) }
            return CommandError(.tooLarge, "the message is \(payload.count) bytes with its header; the chatbot's worker takes at most \(FrameCodec.maxFrameLength) bytes a message: send less (\(pointer))", pointer: pointer)
        }
        events.deliver(type: type, source: source, payload: payload, to: bot)
        return nil
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

    static let noHistory = CommandError(.failed, "the store is off, so there is no chat history")

    /// Events a chatbot emits: replies go back to whoever asked; commands run when allowed.
    func botEmitted(type: String, payload: UnsafeRawBufferPointer, from bot: SupervisedProcess) {
        if type == Self.partialType { return relayPartial(payload) }
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
        let text = value["text"]?.stringValue ?? ""
        let id = value["id"]?.stringValue
        let asked = id.flatMap { pending[$0] }
        // Kept under the conversation and the user the relay sent the message for (a reply
        // cannot move itself into another's conversation); an unknown reply's as it says.
        let conversation = asked?.conversation ?? value["conversation"]?.stringValue ?? "default"
        // A voice message refused (its `code`) joins no conversation: nothing was heard.
        if value["code"] == nil, asked?.kept ?? true {
            if let transcript = value["transcript"]?.stringValue {
                store?.recordChat(conversation: conversation, user: asked?.user, role: "user", source: "voice", text: transcript,
                                  confidence: value["transcript_confidence"]?.numberValue?.doubleValue)
            }
            store?.recordChat(conversation: conversation, user: asked?.user, role: "bot", source: value["adapter"]?.stringValue ?? bot.name, text: text)
        }
        guard let id, let waiting = pending.removeValue(forKey: id) else { return }
        loop.cancel(waiting.timer)
        let tail = end < payload.endIndex ? Array(payload[(end + 1)...])[...] : nil
        // Answered at once, its lines committed beside the answer: every read of the history
        // through the agent (a history or transcript command, the dashboard's page after its
        // redirect, a summary, the next message's context) waits for the writes queued before
        // it (``AgentStore/whenWritten(_:)``), so it shows them. A chat answer is no
        // acknowledgement of something kept: were the agent to die in between, the lines of the
        // exchange would be missing from the history, as an answer not yet given would be.
        waiting.answer(value, tail)
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

    /// Alerts from monitors join the conversation: a burst of ``alertBurst`` per source, then
    /// one a second, each cut at ``longestAlert`` characters. A module raising alerts flat out
    /// wrote 650,000 chat lines (1.6 GB) in 25 s, which no retention deletes; the alerts left
    /// out are counted in a line of their own when the next one is kept.
    func recordAlert(source: String, level: Int, text: String) {
        guard level >= 2, let store else { return }
        let now = EventLoop.now()
        var allowance = alertAllowance[source] ?? RateAllowance(burst: Self.alertBurst, perSecond: 1, now: now)
        let kept = allowance.take(now: now)
        let leftOut = kept ? allowance.takeLeftOut() : 0
        alertAllowance[source] = allowance
        guard kept else { return }
        if leftOut > 0 {
            store.recordChat(conversation: "default", role: "alert", source: source,
                             text: "(\(leftOut) alert\(leftOut == 1 ? "" : "s") of \(source) left out of the chat: at most \(Int(Self.alertBurst)) at once, then one a second)")
        }
        let shown = text.count > Self.longestAlert ? String(text.prefix(Self.longestAlert)) + "… (cut: \(text.utf8.count) bytes)" : text
        store.recordChat(conversation: "default", role: "alert", source: source, text: shown)
    }

    /// Alerts of one source kept at once in the chat.
    static let alertBurst = 20.0

    /// The most characters of an alert kept in the chat.
    static let longestAlert = 4_000
}
