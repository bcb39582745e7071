import Foundation
import JSONSchema

/// A tool call the model asked for: its id, the tool's name, its arguments as the model wrote
/// them (JSON text, not yet checked).
struct ModelToolCall: Equatable {
    var id: String
    var name: String
    var arguments: String
}

/// One answer of the model: its text and the tools it calls.
struct ModelTurn: Equatable {
    var text: String
    var toolCalls: [ModelToolCall]
}

/// Why the model gave no answer, in words for the person chatting.
struct ModelFailure: Error, CustomStringConvertible {
    var description: String
}

/// The OpenAI-compatible chat-completions protocol that llama.cpp's server, Ollama and vLLM
/// share: `POST {base_url}/chat/completions` with the messages and tools; the answer whole, or
/// as server-sent events (`stream`).
struct ChatCompletionClient {
    var endpoint: URL
    var model: String
    var apiKey: String?
    var maxTokens: Int
    var temperature: Double
    var stream: Bool

    /// Asks the model once; `onText` gets each piece of text as it streams.
    func complete(messages: [JSONValue], tools: [JSONValue], timeout: Double, onText: @escaping (String) -> Void = { _ in }) -> Result<ModelTurn, ModelFailure> {
        var request: JSONObject = ["model": .string(model), "messages": .array(messages), "max_tokens": .number(JSONNumber(maxTokens)),
                                   "temperature": .number(JSONNumber(temperature)), "stream": .bool(stream)]
        if !tools.isEmpty { request["tools"] = .array(tools.map { ["type": "function", "function": $0] }) }
        var headers: [(String, String)] = [("Accept", stream ? "text/event-stream" : "application/json")]
        if let apiKey { headers.append(("Authorization", "Bearer \(apiKey)")) }
        let exchange = HTTPExchange(url: endpoint, headers: headers, body: Array(JSONValue.object(request).serialized().utf8),
                                    timeout: timeout, user: "the llm adapter")
        var events = ServerSentEvents()
        let answer = exchange.send(onBody: stream ? { events.feed($0, onText: onText) } : nil)
        switch answer {
        case .failure(let failure):
            let what = failure.timedOut ? "did not answer within \(String(format: "%g", timeout)) s" : "is not reachable (\(failure.description))"
            return .failure(ModelFailure(description: "the language model at \(endpoint.absoluteString) \(what)"))
        case .success(let (status, body)):
            guard (200..<300).contains(status) else { return .failure(Self.refusal(status, stream ? events.raw : body)) }
            return stream ? events.turn() : Self.turn(body)
        }
    }

    /// A non-2xx answer: its status and the server's own message when it gave one.
    static func refusal(_ status: Int, _ body: [UInt8]) -> ModelFailure {
        let parsed = try? JSONValue.parse(body)
        let message = parsed?["error"]?["message"]?.stringValue ?? parsed?["error"]?.stringValue
            ?? String(decoding: body.prefix(200), as: UTF8.self)
        return ModelFailure(description: "the language model server answered HTTP \(status)\(message.isEmpty ? "" : ": \(message)")")
    }

    /// A whole answer: `choices[0].message`'s content and tool calls.
    static func turn(_ body: [UInt8]) -> Result<ModelTurn, ModelFailure> {
        guard let value = try? JSONValue.parse(body), let message = value["choices"]?.arrayValue?.first?["message"], message.objectValue != nil else {
            return .failure(garbage(body))
        }
        let calls = (message["tool_calls"]?.arrayValue ?? []).enumerated().map { index, call in
            ModelToolCall(id: call["id"]?.stringValue ?? "call_\(index)", name: call["function"]?["name"]?.stringValue ?? "",
                          arguments: arguments(call["function"]?["arguments"]))
        }
        return .success(ModelTurn(text: message["content"]?.stringValue ?? "", toolCalls: calls))
    }

    /// The arguments as JSON text: a string as the protocol has it; an object (some servers) serialized.
    static func arguments(_ value: JSONValue?) -> String {
        guard let value else { return "{}" }
        return value.stringValue ?? value.serialized()
    }

    static func garbage(_ body: [UInt8]) -> ModelFailure {
        let shown = String(decoding: body.prefix(120), as: UTF8.self).replacingOccurrences(of: "\n", with: " ")
        return ModelFailure(description: "the language model server's answer is not a chat completion (expected {\"choices\": [{\"message\": …}]}; found \(shown.isEmpty ? "nothing" : "\"\(shown)\""))")
    }
}

/// A streamed answer (`data: {…}` lines, `data: [DONE]`) put together: the text deltas and
/// the tool calls' pieces by their index.
struct ServerSentEvents {
    private var line: [UInt8] = []
    private var text = ""
    private var calls: [Int: ModelToolCall] = [:]
    private var chunks = 0
    private var problem: ModelFailure?
    /// The first bytes, kept for an error's message.
    private(set) var raw: [UInt8] = []

    mutating func feed(_ bytes: [UInt8], onText: (String) -> Void) {
        if raw.count < 2048 { raw += bytes.prefix(2048 - raw.count) }
        for byte in bytes {
            if byte == 10 {
                take(line, onText: onText)
                line.removeAll(keepingCapacity: true)
            } else if line.count < 1 << 20 {
                line.append(byte)
            }
        }
    }

    private mutating func take(_ bytes: [UInt8], onText: (String) -> Void) {
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasSuffix("\r") { text.removeLast() }
        guard text.hasPrefix("data:") else { return }
        let data = text.dropFirst(5).trimmingCharacters(in: .whitespaces)
        guard data != "[DONE]", problem == nil else { return }
        guard let chunk = try? JSONValue.parse(data) else {
            problem = ChatCompletionClient.garbage(Array(data.utf8))
            return
        }
        if let error = chunk["error"] {
            problem = ModelFailure(description: "the language model server failed: \(error["message"]?.stringValue ?? error.serialized())")
            return
        }
        guard let delta = chunk["choices"]?.arrayValue?.first?["delta"] else { return }
        chunks += 1
        if let piece = delta["content"]?.stringValue, !piece.isEmpty {
            self.text += piece
            onText(piece)
        }
        for (position, part) in (delta["tool_calls"]?.arrayValue ?? []).enumerated() {
            let index = part["index"]?.numberValue?.intValue ?? position
            var call = calls[index] ?? ModelToolCall(id: "call_\(index)", name: "", arguments: "")
            if let id = part["id"]?.stringValue { call.id = id }
            if let name = part["function"]?["name"]?.stringValue { call.name += name }
            if let arguments = part["function"]?["arguments"] { call.arguments += ChatCompletionClient.arguments(arguments) }
            calls[index] = call
        }
    }

    /// The whole answer, once the stream ended.
    func turn() -> Result<ModelTurn, ModelFailure> {
        if let problem { return .failure(problem) }
        guard chunks > 0 else { return .failure(ChatCompletionClient.garbage(raw)) }
        return .success(ModelTurn(text: text, toolCalls: calls.keys.sorted().compactMap { calls[$0] }))
    }
}
