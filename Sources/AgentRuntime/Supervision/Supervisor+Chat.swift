import AgentBase
import AgentCore
import AgentLoop
import AgentSupervision
import Foundation
import JSONSchema
import Logging

extension Supervisor {
    /// Control requests that answer later (chat, the settings commands) or right away
    /// (everything else).
    func handleControl(_ request: JSONValue, respond: @escaping (JSONValue) -> Void) {
        switch request["command"]?.stringValue {
        case "chat"?: chat(request, respond: respond)
        case "settings_get"?, "settings_change"?, "validate"?, "modules"?:
            guard let settingsCommands else {
                return respond(["ok": false, "code": "unavailable", "error": "this agent was not started from a settings file: its settings cannot be read or changed here"])
            }
            settingsCommands.answer(request, supervisor: self, respond: respond)
        case "reload"?: reload(respond: respond)
        case "chat_history"?: chatHistory(request, respond: respond)
        case "chat_clear"?:
            guard let store else { return respond(["ok": false, "error": "the store is off, so there is no chat history"]) }
            store.clearChat(conversation: request["conversation"]?.stringValue ?? "default")
            respond(["ok": true])
        default: respond(handleControl(request))
        }
    }

    /// Hands a message to the chatbot; answers once its reply comes back (or after 30 s).
    private func chat(_ request: JSONValue, respond: @escaping (JSONValue) -> Void) {
        guard let text = request["text"]?.stringValue, !text.isEmpty else { return respond(["ok": false, "error": "a chat request needs \"text\""]) }
        guard let bot = processes.first(where: \.isChatbot) else {
            return respond(["ok": false, "error": "no chatbot process is configured; add one, e.g. \"chat\": {\"type\": \"chatbot\", \"logic_adapters\": [\"features\", \"status\"]}"])
        }
        guard bot.hasWorker, bot.state == .running else {
            return respond(["ok": false, "error": .string("the chatbot process \(bot.name) is \(bot.state)")])
        }
        let conversation = request["conversation"]?.stringValue ?? "default"
        chatSequence += 1
        let id = "\(getpid())-\(chatSequence)"
        var fields: JSONObject = [
            "id": .string(id), "conversation": .string(conversation), "text": .string(text),
            "processes": .array(snapshot.map(\.json)),
        ]
        if let context = request["context"], context != .null {
            guard context.objectValue != nil else {
                return respond(["ok": false, "code": "invalid", "pointer": "/context", "error": .string("\"context\" must be an object; found \(Describe.article(context))")])
            }
            fields["context"] = context
        }
        if let adapter = request["adapter"]?.stringValue { fields["adapter"] = .string(adapter) }
        let payload = JSONValue.object(fields)
        deliver(type: "chat.message", source: "control", payload: payload, to: bot)
        store?.recordChat(conversation: conversation, role: "user", source: "", text: text)
        let timer = loop.schedule(after: 30) { [unowned self] in
            guard let pending = pendingChats.removeValue(forKey: id) else { return }
            pending.respond(["ok": false, "error": "the chatbot did not answer within 30 s"])
        }
        pendingChats[id] = PendingChat(respond: respond, timer: timer)
    }

    private func chatHistory(_ request: JSONValue, respond: @escaping (JSONValue) -> Void) {
        guard let queryRunner else { return respond(["ok": false, "error": "the store is off, so there is no chat history"]) }
        let conversation = request["conversation"]?.stringValue ?? "default"
        let after = request["after"]?.numberValue?.intValue ?? 0
        let limit = request["limit"]?.numberValue?.intValue ?? 100
        let inbox = loop.inbox
        let responder = LoopBound(value: respond)
        queryRunner.submit(sql: "SELECT * FROM (SELECT id, time, role, source, text FROM chat WHERE conversation = ? AND id > ? ORDER BY id DESC LIMIT ?) ORDER BY id",
                           params: [.string(conversation), .number(JSONNumber(after)), .number(JSONNumber(limit))]) { result in
            inbox.post {
                switch result {
                case .success(let rows): responder.value(["ok": true, "lines": rows])
                case .failure(let problem): responder.value(["ok": false, "error": .string(problem.description)])
                }
            }
        }
    }

    /// Events a chatbot emits: replies go back to whoever asked; commands run when allowed.
    func chatbotEmitted(type: String, payload: UnsafeRawBufferPointer, from bot: SupervisedProcess) {
        guard type == "chat.reply" || type == "chat.command", let value = try? JSONValue.parse(payload) else { return }
        if type == "chat.reply" {
            let conversation = value["conversation"]?.stringValue ?? "default"
            let text = value["text"]?.stringValue ?? ""
            store?.recordChat(conversation: conversation, role: "bot", source: value["adapter"]?.stringValue ?? bot.name, text: text)
            guard let id = value["id"]?.stringValue, let pending = pendingChats.removeValue(forKey: id) else { return }
            loop.cancel(pending.timer)
            var answer: JSONObject = ["ok": .bool(value["error"] != .bool(true)), "text": .string(text)]
            if value["error"] == .bool(true) { answer["error"] = .string(text) }
            if let adapter = value["adapter"] { answer["adapter"] = adapter }
            if let confidence = value["confidence"] { answer["confidence"] = confidence }
            guard let store else { return pending.respond(.object(answer)) }
            // Answered once the reply is in the history, so that a history read right after the
            // answer (the dashboard's page after its redirect) shows it.
            let inbox = loop.inbox
            let respond = LoopBound(value: pending.respond)
            let reply = JSONValue.object(answer)
            store.whenWritten { inbox.post { respond.value(reply) } }
        } else if bot.settings["allow_process_control"]?.boolValue == true,
                  let action = value["action"]?.stringValue, let name = value["name"]?.stringValue {
            logger.notice("\(action) of \(name) asked in the chat", metadata: ["process": "\(bot.name)"])
            _ = processCommand(action, name: name)
        }
    }

    /// Alerts from monitors join the conversation.
    func recordAlert(source: String, level: Int, text: String) {
        guard level >= 2 else { return }
        store?.recordChat(conversation: "default", role: "alert", source: source, text: text)
    }

    /// Runs a worker's store query off the loop and sends the rows back, with the query's id
    /// (the worker's handlers may query at once: each answer goes to its own call).
    func answerQuery(_ body: UnsafeRawBufferPointer, from process: SupervisedProcess) throws {
        guard let (id, json) = QueryFrame.parseRequest(body) else { throw FrameError("query frame of \(body.count) bytes") }
        let request = try? JSONValue.parse(json)
        guard let sql = request?["sql"]?.stringValue else {
            return replyToQuery(process, id: id, ok: false, Array("the query request has no sql".utf8))
        }
        guard let queryRunner else {
            return replyToQuery(process, id: id, ok: false, Array("the store is off: nothing to query".utf8))
        }
        let inbox = loop.inbox
        let bound = LoopBound(value: (self, process))
        queryRunner.submit(sql: sql, params: request?["params"]?.arrayValue ?? []) { result in
            inbox.post {
                switch result {
                case .success(let rows): bound.value.0.replyToQuery(bound.value.1, id: id, ok: true, Array(rows.serialized().utf8))
                case .failure(let problem): bound.value.0.replyToQuery(bound.value.1, id: id, ok: false, Array(problem.description.utf8))
                }
            }
        }
    }

    func replyToQuery(_ process: SupervisedProcess, id: UInt64, ok: Bool, _ bytes: [UInt8]) {
        guard process.hasWorker else { return }
        FrameCodec.append(.queryResult, body: QueryFrame.result(id: id, ok: ok, bytes), to: process.control)
        markDirty(process)
    }

    /// Delivers an event made by the supervisor itself.
    func deliver(type: String, source: String, payload: JSONValue, to process: SupervisedProcess) {
        let typeBytes = Array(type.utf8)
        let body = Array(payload.serialized().utf8)
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let now = Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
        typeBytes.withUnsafeBytes { t in
            body.withUnsafeBytes { p in
                Array(source.utf8).withUnsafeBytes { EventFrame.appendDelivery(EventFrame.Emitted(type: t, timeNanoseconds: now, payload: p), source: $0, to: process.outgoing) }
            }
        }
        process.eventsDelivered += 1
        markDirty(process)
    }
}

/// A chat request waiting for the chatbot's reply.
struct PendingChat {
    var respond: (JSONValue) -> Void
    var timer: Int
}
