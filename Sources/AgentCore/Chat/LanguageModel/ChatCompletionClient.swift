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
    /// The text the model had streamed before it failed (kept in the answer: nothing is lost).
    var partial = ""
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
        let exchange = HTTPExchange(url: endpoint, headers: headers, body: JSONValue.object(request).serializedBytes(),
                                    timeout: timeout, user: "the llm adapter")
        var events = ServerSentEvents()
        let answer = exchange.send(onBody: stream ? { events.feed($0, onText: onText) } : nil)
        switch answer {
        case .failure(let failure):
            var problem = ModelFailure(description: "the language model at \(endpoint.absoluteString) " + Self.what(failure, timeout: timeout, pieces: events.pieces))
            problem.partial = events.text
            return .failure(problem)
        case .success(let (status, body)):
            guard (200..<300).contains(status) else { return .failure(Self.refusal(status, stream ? events.raw : body)) }
            return stream ? events.turn() : Self.turn(body)
        }
    }

    /// What went wrong with the exchange, after `pieces` pieces of a stream.
    static func what(_ failure: HTTPExchange.Failure, timeout: Double, pieces: Int) -> String {
        let seconds = String(format: "%g", timeout)
        guard pieces > 0 else {
            if failure.badAnswer { return "gave an answer that cannot be used (\(failure.description))" }
            return failure.timedOut ? "did not answer within \(seconds) s" : "is not reachable (\(failure.description))"
        }
        return failure.timedOut ? "did not finish its answer within \(seconds) s (\(pieces) pieces came)"
            : "broke off its answer after \(pieces) pieces (\(failure.description))"
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
