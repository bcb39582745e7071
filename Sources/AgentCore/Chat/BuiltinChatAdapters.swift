import Foundation
import JSONSchema

/// `features`: what the bot can do — every adapter's description and an example.
final class FeaturesAdapter: ChatAdapter {
    let name = "features"
    let summary = "Lists what I can do."
    let examples = ["what can you do", "help", "what are your features", "list your commands"]
    var adapters: [any ChatAdapter] = []

    func confidence(for message: ChatMessage) -> Double? { nil }

    func respond(to message: ChatMessage) -> String {
        "I can answer:\n" + adapters.map { adapter in
            "- \(adapter.summary)" + (adapter.examples.first.map { " (e.g. \"\($0)\")" } ?? "")
        }.joined(separator: "\n")
    }
}

/// `status`: the processes' states, as the supervisor sees them.
final class StatusAdapter: ChatAdapter {
    let name = "status"
    let summary = "Tells the state of the agent's processes."
    let examples = ["status", "what is the status of the processes", "how are the processes doing", "is everything running", "show the processes"]

    func confidence(for message: ChatMessage) -> Double? { nil }

    func respond(to message: ChatMessage) -> String {
        guard !message.processes.isEmpty else { return "No process is configured." }
        return message.processes.map { process in
            var line = "\(process["name"]?.stringValue ?? "?"): \(process["state"]?.stringValue ?? "?")"
            if let pid = process["pid"]?.numberValue?.intValue { line += " (pid \(pid))" }
            if let restarts = process["restarts"]?.numberValue?.intValue, restarts > 0 { line += ", \(restarts) restart\(restarts == 1 ? "" : "s")" }
            if let reason = process["reason"]?.stringValue { line += ": \(reason)" }
            return line
        }.joined(separator: "\n")
    }
}

/// `process_control`: start, stop or restart a named process — only when the chatbot's
/// settings allow it. A spoken request is done only after a "yes" from the same person: the
/// voice grammar matched unrelated speech ("restart your computer if…") to a command.
final class ProcessControlAdapter: ChatAdapter {
    let name = "process_control"
    let summary = "Starts, stops or restarts a process (when allowed)."
    let examples = ["restart the trades process", "stop process busy", "start process trades"]
    /// What the voice grammar adds, so that a spoken request can be confirmed by voice.
    static let spokenAnswers = ["yes", "no"]
    /// How long a spoken request waits for its "yes".
    static let confirmationLifetime = 60.0
    let allowed: Bool
    /// Asks the supervisor: action, process, the message's id (it checks the sender's role).
    let command: (String, String, String) -> Void
    /// Spoken requests waiting for a "yes", by conversation and person (``asker(_:)``).
    private var awaiting: [String: (action: String, name: String, asked: Double)] = [:]

    init(allowed: Bool, command: @escaping (String, String, String) -> Void) {
        self.allowed = allowed
        self.command = command
    }

    func request(in message: ChatMessage) -> (action: String, name: String)? {
        let words = message.text.lowercased().split { !$0.isLetter && !$0.isNumber && $0 != "_" && $0 != "-" && $0 != "." }.map(String.init)
        guard let action = words.first(where: { ["start", "stop", "restart"].contains($0) }) else { return nil }
        let names = message.processes.compactMap { $0["name"]?.stringValue }
        guard let name = names.first(where: { words.contains($0.lowercased()) }) else { return nil }
        return (action, name)
    }

    private static func asker(_ message: ChatMessage) -> String {
        message.conversation + "\u{0}" + LanguageModelAdapter.who(message)
    }

    func confidence(for message: ChatMessage) -> Double? {
        // The asker's "yes" or "no" answers the question; anything else is answered as usual.
        if answers(message) { return 1 }
        return request(in: message) == nil ? 0 : 0.95
    }

    /// Whether `message` is its sender's "yes" or "no" to a spoken request still waiting.
    private func answers(_ message: ChatMessage) -> Bool {
        let now = ChatMessage.now()
        awaiting = awaiting.filter { now - $0.value.asked <= Self.confirmationLifetime }
        let word = LanguageModelAdapter.word(message.text)
        return awaiting[Self.asker(message)] != nil && (LanguageModelAdapter.yes.contains(word) || LanguageModelAdapter.no.contains(word))
    }

    func respond(to message: ChatMessage) -> String {
        // Asked by name too (a workflow's step), where no score pruned the expired ones.
        if answers(message), let waiting = awaiting.removeValue(forKey: Self.asker(message)) {
            guard LanguageModelAdapter.yes.contains(LanguageModelAdapter.word(message.text)) else {
                return "Not done: \(waiting.action) of \(waiting.name) (it waited for a \"yes\")."
            }
            return carryOut(waiting.action, waiting.name, message)
        }
        guard let (action, name) = request(in: message) else { return "Which process? Say e.g. \"restart trades\"." }
        guard message.spoken else { return carryOut(action, name, message) }
        if let refusal = refusal(action, message) { return refusal }
        awaiting[Self.asker(message)] = (action, name, ChatMessage.now())
        return "\(Self.capitalised(action)) \(name)? I heard \"\(message.text)\". Say or type \"yes\" to do it."
    }

    private func carryOut(_ action: String, _ name: String, _ message: ChatMessage) -> String {
        if let refusal = refusal(action, message) { return refusal }
        command(action, name, message.id)
        return "\(Self.capitalised(action)) of \(name) requested."
    }

    /// Why `action` is not done for the sender (not allowed here, or not their role).
    private func refusal(_ action: String, _ message: ChatMessage) -> String? {
        guard allowed else { return "I may not \(action) processes: set \"allow_process_control\": true in the chatbot's settings." }
        if let role = message.caller.map({ $0["role"]?.stringValue ?? "no" }), role != "admin" {
            return "I may not \(action) processes for you: that needs the admin role, and you have \(role == "no" ? "none" : "the \(role) role")."
        }
        return nil
    }

    private static func capitalised(_ word: String) -> String { word.prefix(1).uppercased() + word.dropFirst() }
}

/// `latest_value`: the latest value of a payload field of an event type, from the store.
final class LatestValueAdapter: ChatAdapter {
    struct Value { var name: String; var event: String; var field: String }
    let name = "latest_value"
    let summary: String
    let examples: [String]
    let values: [Value]
    let query: (String, [JSONValue]) throws -> [JSONValue]

    init(values: [Value], query: @escaping (String, [JSONValue]) throws -> [JSONValue]) {
        self.values = values
        self.query = query
        summary = "Tells the latest " + values.map(\.name).joined(separator: ", ") + "."
        examples = values.map { "what is the \($0.name)?" }
    }

    static let hostValues = [
        Value(name: "cpu usage", event: "host_stats", field: "cpu_percent"),
        Value(name: "memory usage", event: "host_stats", field: "memory_percent"),
        Value(name: "disk usage", event: "host_stats", field: "disk_percent"),
        Value(name: "load", event: "host_stats", field: "load1"),
    ]

    func value(in message: ChatMessage) -> Value? {
        let words = Set(NaiveBayesScorer.words(message.text))
        return values.first { Set(NaiveBayesScorer.words($0.name)).isSubset(of: words) }
    }

    func confidence(for message: ChatMessage) -> Double? { value(in: message) == nil ? 0 : 0.9 }

    func respond(to message: ChatMessage) -> String {
        guard let value = value(in: message) else { return "Which value? I know " + values.map(\.name).joined(separator: ", ") + "." }
        do {
            guard let row = try query("SELECT time, source, json_extract(payload, '$.' || ?) AS value FROM events WHERE type = ? ORDER BY id DESC LIMIT 1",
                                      [.string(value.field), .string(value.event)]).first else {
                return "I have no \(value.event) event yet."
            }
            let age = Date().timeIntervalSince1970 - (row["time"]?.numberValue?.doubleValue ?? 0)
            let shown = row["value"].map { $0.stringValue ?? $0.serialized() } ?? "unknown"
            return "The \(value.name) is \(shown) (\(value.event) from \(row["source"]?.stringValue ?? "?"), \(Int(saturating: age.rounded())) s ago)."
        } catch {
            return "I cannot read the store: \(error)"
        }
    }
}

/// `rest`: an external web service scores and answers (POST `{"message", "conversation"}`, and
/// `"context"` when the sender gave one,
/// answer `{"confidence": 0...1, "response": "..."}`).
final class RestAdapter: ChatAdapter {
    let name: String
    let summary: String
    let examples: [String] = []
    let url: URL
    let timeout: Double
    let retries: Int
    private var answer: (message: String, text: String)?
    /// Why the service did not answer the last time, if it did not.
    private(set) var failure: String?

    init(url: URL, name: String?, timeout: Double, retries: Int) {
        self.url = url
        self.name = name ?? "rest"
        summary = "Asks the service at \(url.absoluteString)."
        self.timeout = timeout
        self.retries = retries
    }

    func confidence(for message: ChatMessage) -> Double? {
        answer = nil
        failure = nil
        var request: JSONObject = ["message": .string(message.text), "conversation": .string(message.conversation)]
        if let context = message.context { request["context"] = context }
        let body = JSONValue.object(request).serialized()
        var lastError = ""
        for attempt in 0...retries {
            if attempt > 0 { Thread.sleep(forTimeInterval: 0.2 * Double(attempt)) }
            // No attempt outlasts the sender's wait (a queued message has less of it).
            let left = min(timeout, (message.secondsLeft ?? .infinity) - ChatbotProcess.replyMargin)
            guard left > 0 else {
                if lastError.isEmpty { lastError = "no time was left before its sender stopped waiting" }
                break
            }
            switch HTTPPost.send(url: url, body: Array(body.utf8), timeout: left) {
            case .success(let (status, data)):
                guard (200..<300).contains(status) else {
                    lastError = "HTTP \(status)"
                    continue
                }
                guard let reply = try? JSONValue.parse(data), let confidence = reply["confidence"]?.numberValue?.doubleValue else {
                    lastError = "its answer is not {\"confidence\", \"response\"}"
                    continue
                }
                answer = (message.text, reply["response"]?.stringValue ?? "")
                return min(1, max(0, confidence))
            case .failure(let error):
                lastError = error.description
            }
        }
        failure = "the service at \(url.absoluteString) did not answer (\(lastError))"
        return 0
    }

    func respond(to message: ChatMessage) -> String {
        if let answer, answer.message == message.text { return answer.text }
        return failure.map { "Sorry: \($0)." } ?? ""
    }
}
