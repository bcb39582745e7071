import Foundation
import JSONSchema

/// `llm`: a language model behind the OpenAI-compatible chat-completions protocol answers, and
/// may call the agent's commands listed in `tools`. Runs on the chatbot worker's thread (its
/// HTTP calls block that thread only, never the supervisor); each tool call goes to the
/// supervisor as a `chatTool` frame for the message being answered, and runs there through
/// the command registry as the person chatting (their role, validated, audited as `chat`).
/// A mutating tool waits for the person's "yes" in the next message unless `confirm` is false.
final class LanguageModelAdapter: ChatAdapter {
    /// A mutating tool call waiting for the person's "yes".
    private struct Confirmation {
        var who: String
        var messages: [JSONValue]
        var call: ModelToolCall
        var arguments: JSONObject
        /// Calls the model asked for in the same answer after this one: not run.
        var rest: [ModelToolCall]
        var callsMade: Int
        /// When it was asked: a "yes" after ``confirmationLifetime`` runs nothing.
        var asked: Double
    }

    let name: String
    let summary: String
    let examples: [String] = []
    private let settings: LanguageModelSettings
    private let client: ChatCompletionClient
    private let host: WorkerHost
    /// The tools' functions and whether each changes something, asked of the supervisor once.
    private var functions: [JSONValue]?
    private var mutating: [String: Bool] = [:]
    /// Per conversation and asker (``Asker``): another user's message in the same conversation
    /// neither confirms nor cancels it, and may wait for a confirmation of its own.
    private var awaiting: [Asker: Confirmation] = [:]

    /// Whose confirmation: one conversation, one person.
    private struct Asker: Hashable {
        var conversation: String
        var who: String
        init(_ message: ChatMessage) {
            conversation = message.conversation
            who = LanguageModelAdapter.who(message)
        }
    }
    /// Made once, not per message (only the chatbot worker's thread uses it).
    private let clock = ISO8601DateFormatter()
    /// The system prompt's placeholders, found once.
    private let prompt: PromptTemplate
    /// A message's whole answer must come before the supervisor stops waiting for it (30 s).
    static let messageBudget = 28.0
    /// How long a question "run this?" waits for its "yes".
    static let confirmationLifetime = 300.0

    init(settings: LanguageModelSettings, host: WorkerHost) {
        self.settings = settings
        self.host = host
        prompt = PromptTemplate(settings.systemPrompt)
        name = settings.name
        summary = "Answers with the language model \(settings.model)" + (settings.tools.isEmpty ? "." : ", using the agent's commands \(settings.tools.joined(separator: ", ")).")
        client = ChatCompletionClient(endpoint: settings.endpoint, model: settings.model, apiKey: settings.apiKey,
                                      maxTokens: settings.maxTokens, temperature: settings.temperature, stream: settings.stream)
    }

    func confidence(for message: ChatMessage) -> Double? {
        let now = Date().timeIntervalSince1970
        awaiting = awaiting.filter { now - $0.value.asked <= Self.confirmationLifetime }
        // The asker's next message is the answer to the question: this adapter takes it.
        return awaiting[Asker(message)] != nil ? 1 : settings.confidence
    }

    /// Why the last message got no answer from the model (nil: it got one).
    private(set) var failure: String?

    func respond(to message: ChatMessage) -> String {
        failure = nil
        if message.purpose == "summary" { return summarize(message) }
        // Within the sender's wait, less a moment for the reply to reach them.
        let deadline = Date().timeIntervalSince1970 + min(Self.messageBudget, (message.secondsLeft ?? .infinity) - ChatbotProcess.replyMargin)
        let word = Self.word(message.text)
        // Only the asker confirms or cancels; another user's "yes" is told whose it is, and
        // anything else they say is answered as usual, the question left waiting.
        if Self.yes.contains(word), awaiting[Asker(message)] == nil,
           let other = awaiting.first(where: { $0.key.conversation == message.conversation })?.value {
            return "Only \(other.who) may confirm \(other.call.name); it waits for their \"yes\"."
        }
        if let waiting = awaiting.removeValue(forKey: Asker(message)) {
            guard Self.yes.contains(word) else {
                let notRun = "Not run: \(waiting.call.name) (it waited for a \"yes\")."
                return Self.no.contains(word) ? notRun : notRun + "\n" + converse(fresh(message), calls: 0, message, deadline)
            }
            var messages = waiting.messages
            messages.append(Self.toolMessage(waiting.call, run(waiting.call.name, waiting.arguments, message)))
            for call in waiting.rest { messages.append(Self.toolMessage(call, Self.refusal("not run: one mutating call at a time; ask for it again"))) }
            return converse(messages, calls: waiting.callsMade, message, deadline)
        }
        return converse(fresh(message), calls: 0, message, deadline)
    }

    /// A transcript summed up (`chat_summary`): one request, no tools, no history.
    private func summarize(_ message: ChatMessage) -> String {
        let messages: [JSONValue] = [["role": "system", "content": .string(Self.summaryPrompt)], ["role": "user", "content": .string(message.text)]]
        switch client.complete(messages: messages, tools: [], timeout: settings.timeout) {
        case .failure(let failed):
            failure = failed.description
            return "Sorry: \(failed.description)."
        case .success(let turn):
            if turn.text.isEmpty { failure = "the language model gave an empty answer" }
            return turn.text
        }
    }

    static let summaryPrompt = """
        Sum up this chat transcript of an agent runtime in a few sentences: who asked what, what was answered, \
        the alerts raised and the actions taken with their outcome. Only what the transcript says.
        """

    /// The system prompt, the conversation's earlier lines, and the message.
    private func fresh(_ message: ChatMessage) -> [JSONValue] {
        let prompt = prompt.render { placeholder in
            switch placeholder {
            case .user: Self.who(message)
            case .now: clock.string(from: Date())
            case .tools: settings.tools.isEmpty ? "none" : settings.tools.joined(separator: ", ")
            case .conversation: message.conversation
            case .preferences: Self.preferences(message)
            }
        }
        return [["role": "system", "content": .string(prompt)]] + history(message) + [["role": "user", "content": .string(message.text)]]
    }

    /// The conversation's last lines from the store, oldest first, without the message itself.
    private func history(_ message: ChatMessage) -> [JSONValue] {
        guard settings.history > 0,
              var rows = try? host.queryRows(
                // The sender's lines and the alerts: another user's in the same conversation are not theirs to see.
                "SELECT role, source, text FROM chat WHERE conversation = ? AND role != 'tool' AND (user IS NULL OR user = ?) ORDER BY id DESC LIMIT ?",
                [.string(message.conversation), .string(Self.who(message)), .number(JSONNumber(settings.history + 1))]) else { return [] }
        if let newest = rows.first, newest["role"]?.stringValue == "user", newest["text"]?.stringValue == message.text { rows.removeFirst() }
        // Newest first, within the byte budget: a line that does not fit is cut, older ones left.
        var left = settings.historyBytes
        var kept: [(row: JSONValue, text: String)] = []
        for row in rows.prefix(settings.history) where left > 0 {
            let text = row["text"]?.stringValue ?? ""
            guard text.utf8.count > left else {
                kept.append((row, text))
                left -= text.utf8.count
                continue
            }
            // Cut where a character begins (not inside one's UTF-8 bytes).
            let bytes = Array(text.utf8)
            var cut = left
            while cut > 0, bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
            kept.append((row, String(decoding: bytes[..<cut], as: UTF8.self) + "… (cut: \(bytes.count) bytes)"))
            left = 0
        }
        return kept.reversed().map { row, text -> JSONValue in
            switch row["role"]?.stringValue {
            case "user": return ["role": "user", "content": .string(text)]
            case "alert": return ["role": "user", "content": .string("(alert from \(row["source"]?.stringValue ?? "?")) \(text)")]
            default: return ["role": "assistant", "content": .string(text)]
            }
        }
    }

    /// Asks the model until it answers without a tool call (or the bounds are reached).
    private func converse(_ start: [JSONValue], calls: Int, _ message: ChatMessage, _ deadline: Double) -> String {
        var messages = start
        var calls = calls
        let tools = functions(for: message)
        let relay = PartialAnswerRelay(id: message.id) { [host] piece in host.emitJSON("chat.partial", piece) }
        while true {
            let remaining = deadline - Date().timeIntervalSince1970
            guard remaining > 0.5 else {
                failure = "the language model did not finish in time (\(Int(Self.messageBudget)) s at most, less for a message that waited its turn)"
                return "Sorry: the language model did not finish in time for this message (\(Int(Self.messageBudget)) s at most, less for a message that waited its turn; \(calls) tool call\(calls == 1 ? "" : "s") made)."
            }
            let turn: ModelTurn
            switch client.complete(messages: messages, tools: tools, timeout: min(settings.timeout, remaining), onText: relay.relay) {
            case .failure(let failure):
                self.failure = failure.description
                // What the model streamed before it failed stays in the answer (and its history).
                return (failure.partial.isEmpty ? "" : failure.partial + "\n") + "Sorry: \(failure.description)."
                    + (calls > 0 ? " (\(calls) tool call\(calls == 1 ? "" : "s") made before.)" : "")
            case .success(let answer): turn = answer
            }
            guard !turn.toolCalls.isEmpty else { return turn.text.isEmpty ? "(the language model gave an empty answer)" : turn.text }
            messages.append(Self.assistantMessage(turn))
            for (index, call) in turn.toolCalls.enumerated() {
                calls += 1
                guard calls <= settings.maxToolCalls else {
                    return "I stopped: the language model asked for more than \(settings.maxToolCalls) tool calls for one message (max_tool_calls)."
                        + (turn.text.isEmpty ? "" : "\n" + turn.text)
                }
                let arguments: JSONObject
                switch check(call) {
                case .refused(let refusal):
                    messages.append(Self.toolMessage(call, refusal))
                    continue
                case .arguments(let checked): arguments = checked
                }
                if settings.confirm, mutating[call.name] == true {
                    awaiting[Asker(message)] = Confirmation(who: Self.who(message), messages: messages, call: call, arguments: arguments,
                                                                  rest: Array(turn.toolCalls[(index + 1)...]), callsMade: calls,
                                                                  asked: Date().timeIntervalSince1970)
                    return (turn.text.isEmpty ? "" : turn.text + "\n")
                        + "I am about to run \(call.name) \(Self.shown(arguments)). Reply \"yes\" to run it; anything else cancels."
                }
                messages.append(Self.toolMessage(call, run(call.name, arguments, message)))
            }
        }
    }

    /// A call's arguments, if it names one of this adapter's tools and its arguments are a
    /// JSON object; else the refusal the model reads.
    private enum Checked {
        case arguments(JSONObject)
        case refused(JSONValue)
    }

    private func check(_ call: ModelToolCall) -> Checked {
        guard settings.tools.contains(call.name), mutating[call.name] != nil else {
            return .refused(Self.refusal("\"\(call.name.prefix(100))\" is not one of your tools (\(settings.tools.joined(separator: ", ")))"))
        }
        guard call.arguments.utf8.count <= 65_536 else { return .refused(Self.refusal("the arguments are larger than 64 KiB")) }
        let text = call.arguments.trimmingCharacters(in: .whitespacesAndNewlines)
        let value: JSONValue
        do throws(JSONParseError) {
            value = try JSONValue.parse(text.isEmpty ? "{}" : text)
        } catch {
            // As the other fronts refuse a request that is not JSON: where, why, and the pointer.
            return .refused(Self.invalid("the arguments are not valid JSON at line \(error.line), column \(error.column): \(error.message)", pointer: error.pointer))
        }
        guard case .object(let object) = value else {
            return .refused(Self.invalid("the arguments must be a JSON object; found \(call.arguments.prefix(100))", pointer: ""))
        }
        return .arguments(object)
    }

    /// The tools' functions, asked of the supervisor for the first message (nil answer: none).
    private func functions(for message: ChatMessage) -> [JSONValue] {
        if let functions { return functions }
        guard !settings.tools.isEmpty else { return [] }
        let answer = ask(["message": .string(message.id), "describe": .array(settings.tools.map { .string($0) })])
        guard let tools = answer["tools"]?.arrayValue else {
            host.sendText(.log, level: 2, "the llm adapter \(name) got no tools from the agent: \(answer["error"]?.stringValue ?? answer.serialized())")
            return []
        }
        for tool in tools { if let name = tool["name"]?.stringValue { mutating[name] = tool["mutating"]?.boolValue ?? true } }
        let found = tools.map { tool -> JSONValue in
            ["name": tool["name"] ?? "", "description": tool["description"] ?? "", "parameters": tool["parameters"] ?? [:]]
        }
        functions = found
        return found
    }

    /// Runs a tool through the supervisor for `message`'s person: the command's answer or refusal.
    private func run(_ tool: String, _ arguments: JSONObject, _ message: ChatMessage) -> JSONValue {
        ask(["message": .string(message.id), "call": ["name": .string(tool), "arguments": .object(arguments)]])
    }

    private func ask(_ request: JSONValue) -> JSONValue {
        guard let reply = host.ask(.chatTool, request.serializedBytes(), timeout: 30) else {
            return Self.refusal("the agent did not answer the tool call within 30 s")
        }
        if reply.status == 0, let answer = try? JSONValue.parse(reply.bytes) { return answer }
        return Self.refusal(String(decoding: reply.bytes, as: UTF8.self))
    }

    static func refusal(_ text: String) -> JSONValue { ["ok": false, "error": .string(text)] }

    /// A refusal of the call's arguments, worded and pointed as every front refuses a request.
    static func invalid(_ text: String, pointer: String) -> JSONValue {
        ["ok": false, "code": "invalid", "error": .string(text), "pointer": .string(pointer)]
    }

    static func assistantMessage(_ turn: ModelTurn) -> JSONValue {
        ["role": "assistant", "content": turn.text.isEmpty ? .null : .string(turn.text),
         "tool_calls": .array(turn.toolCalls.map { call in
             ["id": .string(call.id), "type": "function", "function": ["name": .string(call.name), "arguments": .string(call.arguments)]]
         })]
    }

    /// A tool's answer for the model (at most 16 KiB of it).
    static func toolMessage(_ call: ModelToolCall, _ answer: JSONValue) -> JSONValue {
        let text = answer.serialized()
        return ["role": "tool", "tool_call_id": .string(call.id), "content": .string(text.utf8.count > 16_384 ? String(text.prefix(16_384)) + "… (cut)" : text)]
    }

    /// Who sent the message, as the supervisor says (the user, or the front).
    static func who(_ message: ChatMessage) -> String {
        message.context?["user"]?.stringValue ?? message.caller?["user"]?.stringValue ?? message.caller?["front"]?.stringValue ?? "the operator"
    }

    /// The sender's preferences for the prompt: `language fr, units metric, …` (`none set`).
    static func preferences(_ message: ChatMessage) -> String {
        guard case .object(let preferences)? = message.context?["preferences"] else { return "none set" }
        var parts: [String] = []
        for key in ["language", "units", "verbosity"] { if let value = preferences[key]?.stringValue { parts.append("\(key) \(value)") } }
        if case .object(let custom)? = preferences["custom"] {
            for key in custom.keys.sorted() { parts.append("\(key) \(custom[key]!.serialized())") }
        }
        return parts.isEmpty ? "none set" : parts.joined(separator: ", ")
    }

    /// A call's arguments as the person confirms them: whole (a cut would hide what runs
    /// after it; ``check(_:)`` bounds them at 64 KiB), and with the characters that do not
    /// show as themselves — bidirectional overrides, zero-width and other format characters,
    /// C1 controls a terminal may obey — written as `\u{…}`, so that the text read is the
    /// text run.
    static func shown(_ arguments: JSONObject) -> String {
        var text = ""
        for scalar in JSONValue.object(arguments).serialized().unicodeScalars {
            switch scalar.properties.generalCategory {
            case .format, .control, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned, .surrogate:
                text += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default:
                text.unicodeScalars.append(scalar)
            }
        }
        return text
    }

    static func word(_ text: String) -> String {
        text.lowercased().trimmingCharacters(in: .whitespacesAndNewlines.union(.punctuationCharacters))
    }

    static let yes: Set<String> = ["yes", "y", "yes please", "confirm", "confirmed", "ok", "okay", "do it", "go ahead"]
    static let no: Set<String> = ["no", "n", "cancel", "stop", "don't", "do not", "abort"]
}
