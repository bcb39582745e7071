import AgentBase
import AgentCommands
import AgentLoop
import AgentStore
import AgentSupervision
import AgentWork
import Foundation
import JSONSchema

extension ChatRelay {
    /// Runs `body` with `user`'s preferences: at once when known, else once read from the store
    /// off the loop (messages of one user waiting for the read keep their order).
    func withPreferences(of user: String, _ body: @escaping (ChatPreferences) -> Void) {
        if let known = preferences[user] { return body(known) }
        guard let path = store?.path else { return body(ChatPreferences()) }
        if loadingPreferences[user] != nil { return loadingPreferences[user]!.append(body) }
        loadingPreferences[user] = [body]
        let inbox = loop.inbox
        let loaded = LoopOwned({ [weak self] (found: ChatPreferences) in self?.loaded(found, of: user) })
        BlockingPool.storeReads.submit {
            let found = ChatPreferences(stored: try? StoreReader(path: path).chatPreferences(user: user))
            inbox.post { loaded.value(found) }
        }
    }

    private func loaded(_ found: ChatPreferences, of user: String) {
        // A change written meanwhile is newer than what was read.
        let current = preferences[user] ?? found
        preferences[user] = current
        for waiting in loadingPreferences.removeValue(forKey: user) ?? [] { waiting(current) }
    }

    /// A message's context as the adapters get it: the sender's, with `user` and `preferences`
    /// set by the relay (a sender cannot pass others').
    nonisolated static func context(_ given: JSONObject?, user: String, preferences: ChatPreferences) -> JSONObject {
        var context = given ?? [:]
        context["user"] = .string(user)
        context["preferences"] = preferences.json
        return context
    }

    /// `chat_clear`: forgets the lines asked for, once a conversation named is known to have some.
    func clear(conversation: String?, user: String?, respond: @escaping (Result<OKAnswer, CommandError>) -> Void) {
        guard let store else { return respond(.failure(Self.noHistory)) }
        guard let conversation, conversation != ChatHistoryCommand.defaultConversation else {
            store.clearChat(conversation: conversation, user: user)
            return respond(.success(OKAnswer()))
        }
        let path = store.path
        let inbox = loop.inbox
        let reply = LoopOwned(respond)
        // After the lines queued before it are written: a conversation just started is known.
        store.whenWritten {
            BlockingPool.storeReads.submit {
                let exists = Result { try StoreReader(path: path).chatExists(conversation: conversation, user: user) }
                inbox.post {
                    switch exists {
                    case .success(true):
                        store.clearChat(conversation: conversation, user: user)
                        reply.value(.success(OKAnswer()))
                    case .success(false): reply.value(.failure(ChatHistoryCommand.notFound(conversation)))
                    case .failure(let error): reply.value(.failure(.unavailable("the chat history could not be read: \(error)")))
                    }
                }
            }
        }
    }

    /// `chat_summary`: the lines read and summed up off the loop; then, when the chatbot has an
    /// `llm` adapter with `"summary": true`, its text instead (the extractive one when it fails).
    func summary(conversation: String, user: String?, respond: @escaping (Result<ChatSummaryCommand.Answer, CommandError>) -> Void) {
        guard let store else { return respond(.failure(Self.noHistory)) }
        let path = store.path
        let inbox = loop.inbox
        let summed = LoopOwned({ [weak self] (result: Result<(ChatSummaryCommand.Answer, String), CommandError>) in
            guard let self else { return }
            switch result {
            case .failure(let refusal): respond(.failure(refusal))
            case .success(let (extractive, transcript)): modelSummary(extractive, transcript: transcript, user: user, respond: respond)
            }
        })
        // After the lines queued before it (an answer's are committed after the answer).
        store.whenWritten {
            BlockingPool.storeReads.submit {
                let result = Self.extractiveSummary(path: path, conversation: conversation, user: user)
                inbox.post { summed.value(result) }
            }
        }
    }

    /// The extractive summary and the transcript's newest part (what a model's context takes). Blocks.
    nonisolated static func extractiveSummary(path: String, conversation: String, user: String?) -> Result<(ChatSummaryCommand.Answer, String), CommandError> {
        do {
            let lines = try StoreReader(path: path).chat(conversation: conversation, user: user, limit: ChatTranscriptCommand.maximumLines,
                                                         maxBytes: ListAnswerSize.bytes).lines
            if lines.isEmpty, conversation != ChatHistoryCommand.defaultConversation { return .failure(ChatHistoryCommand.notFound(conversation)) }
            let transcript = String(ChatTranscript.text(lines).suffix(summaryTranscriptCharacters))
            return .success((ChatSummaryCommand.Answer(conversation: conversation, facts: ChatSummary(lines)), transcript))
        } catch {
            return .failure(.unavailable("the chat history could not be read: \(error)"))
        }
    }

    /// The most characters of a transcript given to the language model for its summary.
    nonisolated static let summaryTranscriptCharacters = 32_000

    /// The `llm` adapter's summary (one with `"summary": true`), or the extractive one as it is.
    private func modelSummary(_ extractive: ChatSummaryCommand.Answer, transcript: String, user: String?,
                              respond: @escaping (Result<ChatSummaryCommand.Answer, CommandError>) -> Void) {
        let adapters = processes().first(where: \.isChatbot)?.settings["logic_adapters"]?.arrayValue ?? []
        guard extractive.first != nil,
              let model = adapters.first(where: { $0["type"]?.stringValue == "llm" && $0["summary"]?.boolValue == true }) else { return respond(.success(extractive)) }
        let name = model["name"]?.stringValue ?? "llm"
        let fallback = { (why: String) in
            var answer = extractive
            answer.modelError = why
            respond(.success(answer))
        }
        // The summary is asked as the reader: the model gets no tools for it.
        let asker = user ?? ChatUser.operatorName
        deliver(transcript, conversation: "summary of " + extractive.conversation, user: asker, context: ["user": .string(asker)], adapter: name,
                purpose: "summary", caller: CommandCaller(front: "summary", user: asker), kept: false, answer: { value in
            let text = value["text"]?.stringValue ?? ""
            if let failed = value["failed"]?.stringValue { return fallback("the llm adapter \(name) failed: \(failed)") }
            if value["error"] == .bool(true) || text.isEmpty { return fallback("the llm adapter \(name) gave no summary: \(text)") }
            var answer = extractive
            answer.method = "language_model"
            answer.text = text
            respond(.success(answer))
        }, fail: { fallback("the llm adapter \(name) gave no summary: \($0.message)") })
    }

    /// `chat_preferences_set`: the change merged into the kept preferences, `custom` checked
    /// against the chatbot's `preferences_schema` (read and checked off the loop), then written.
    /// One user's changes are made one at a time, in the order they came: each reads the
    /// preferences once the change before it is committed (or refused), so that two fronts
    /// changing the same user at once both have their change kept (no lost update).
    func setPreferences(_ request: ChatPreferencesSetCommand.Request, user: String,
                        respond: @escaping (Result<ChatPreferencesCommand.Answer, CommandError>) -> Void) {
        guard store != nil else { return respond(.failure(Self.noHistory)) }
        let change = { [weak self] in
            guard let self else { return }
            changePreferences(request, user: user) { [weak self] result in
                respond(result)
                self?.nextPreferenceChange(of: user)
            }
        }
        if changingPreferences[user] != nil { return changingPreferences[user]!.append(change) }
        changingPreferences[user] = []
        change()
    }

    /// Starts the change of `user`'s preferences that waited first, if any.
    private func nextPreferenceChange(of user: String) {
        guard var waiting = changingPreferences[user], !waiting.isEmpty else {
            changingPreferences[user] = nil
            return
        }
        let next = waiting.removeFirst()
        changingPreferences[user] = waiting
        next()
    }

    /// One change: read, merged, checked and written (the read and the check off the loop).
    private func changePreferences(_ request: ChatPreferencesSetCommand.Request, user: String,
                                   respond: @escaping (Result<ChatPreferencesCommand.Answer, CommandError>) -> Void) {
        guard let store else { return respond(.failure(Self.noHistory)) }
        let bot = processes().first(where: \.isChatbot)
        let schema = bot?.settings["preferences_schema"]
        let pointer = (bot.map { "/processes/" + JSONPointer.escape($0.name) } ?? "") + "/preferences_schema"
        let path = store.path
        let inbox = loop.inbox
        let reply = LoopOwned({ [weak self] (result: Result<ChatPreferences, CommandError>) in
            guard let self else { return }
            if case .success(let written) = result { preferences[user] = written }
            respond(result.map { ChatPreferencesCommand.Answer(user: user, preferences: $0) })
        })
        BlockingPool.storeReads.submit {
            // A read that fails changes nothing: merging over "none" would wipe what is kept.
            let stored: String?
            do { stored = try StoreReader(path: path).chatPreferences(user: user) } catch {
                return inbox.post { reply.value(.failure(.unavailable("the preferences could not be read from the store (\(error)); nothing was changed: try again"))) }
            }
            let kept = ChatPreferences(stored: stored)
            let changed = kept.changed(by: request)
            if let schema, let validator = try? JSONSchemaValidator(schema: schema),
               let refusal = changed.refusal(schema: validator, settingsPointer: pointer) {
                return inbox.post { reply.value(.failure(refusal)) }
            }
            store.setChatPreferences(user: user, value: changed.json.serialized()) { written in
                inbox.post { reply.value(written ? .success(changed) : .failure(.unavailable("the preferences could not be written to the store; try again"))) }
            }
        }
    }

    /// A tool call the `llm` adapter made for a message joins its conversation (a `tool` line:
    /// the tool, and `ok …` or `error: …`), for its transcript and its summary's actions.
    func recordTool(message id: String, tool: String, answer: JSONValue) {
        guard let asked = pending[id], asked.kept else { return }
        let text = answer["ok"] == true ? "ok" : "error: " + (answer["error"]?.stringValue ?? "refused")
        store?.recordChat(conversation: asked.conversation, user: asked.user, role: "tool", source: tool, text: text)
    }
}
