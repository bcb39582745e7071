import JSONSchema

/// A streamed answer (`data: {…}` lines, `data: [DONE]`) put together: the text deltas and
/// the tool calls' pieces by their index. A stream must end with `[DONE]` or a choice's
/// `finish_reason`: one cut before is a failure that keeps the text so far. A server that
/// ignores `stream` and answers one JSON completion is read as such.
struct ServerSentEvents {
    private var line: [UInt8] = []
    private(set) var text = ""
    private var calls: [Int: ModelToolCall] = [:]
    /// The chunks with a delta taken so far.
    private(set) var pieces = 0
    private var ended = false
    private var problem: ModelFailure?
    /// The body is one JSON object, not events: kept whole.
    private var whole: [UInt8]?
    /// The first bytes, kept for an error's message.
    private(set) var raw: [UInt8] = []

    mutating func feed(_ bytes: [UInt8], onText: (String) -> Void) {
        if raw.count < 2048 { raw += bytes.prefix(2048 - raw.count) }
        if whole == nil, pieces == 0, line.isEmpty, let first = raw.first(where: { $0 > 0x20 }), first == UInt8(ascii: "{") { whole = [] }
        if whole != nil {
            whole! += bytes
            return
        }
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
        guard text.hasPrefix("data:"), problem == nil else { return }
        let data = text.dropFirst(5).trimmingCharacters(in: .whitespaces)
        guard data != "[DONE]" else {
            ended = true
            return
        }
        guard let chunk = try? JSONValue.parse(data) else {
            problem = ChatCompletionClient.garbage(Array(data.utf8))
            problem?.partial = self.text
            return
        }
        if let error = chunk["error"] {
            problem = ModelFailure(description: "the language model server failed: \(error["message"]?.stringValue ?? error.serialized())", partial: self.text)
            return
        }
        guard let choice = chunk["choices"]?.arrayValue?.first else { return }
        if let reason = choice["finish_reason"], reason != .null { ended = true }
        guard let delta = choice["delta"] else { return }
        pieces += 1
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
        if let whole { return ChatCompletionClient.turn(whole) }
        guard pieces > 0 else { return .failure(ChatCompletionClient.garbage(raw)) }
        guard ended else {
            return .failure(ModelFailure(description: "the language model's stream ended after \(pieces) pieces without its end (data: [DONE] or a finish_reason)", partial: text))
        }
        return .success(ModelTurn(text: text, toolCalls: calls.keys.sorted().compactMap { calls[$0] }))
    }
}
