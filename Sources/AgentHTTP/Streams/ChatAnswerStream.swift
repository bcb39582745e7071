import AgentBase
import AgentCommands
import Hummingbird
import JSONSchema

/// `POST /api/chat` with `"stream": true` (or `Accept: text/event-stream`): the answer as
/// server-sent events while the language model writes it — `event: partial` with
/// `{"text": PIECE}` for each piece, then one `event: answer` with the command's whole answer
/// (`{"ok": true, "text": …}`, or its refusal `{"ok": false, "error": …}`), and the stream ends.
/// The whole answer is what the history keeps; the pieces are only shown.
enum ChatAnswerStream {
    private enum Item: Sendable {
        case partial(String)
        case answer(JSONValue)
    }

    /// Whether the request asks for the answer in pieces.
    static func wanted(_ request: Request, _ checked: CheckedRequest) -> Bool {
        guard checked.name == ChatCommand.name else { return false }
        if let stream = checked.json["stream"]?.boolValue { return stream }
        return request.headers[.accept]?.lowercased().contains("text/event-stream") ?? false
    }

    static func response(_ commands: CommandCenter, _ checked: CheckedRequest, caller: CommandCenter.Caller) -> Response {
        // Unbounded here: the relay bounds the pieces of a message (1 MiB), and the chat its time.
        let (items, continuation) = AsyncStream.makeStream(of: Item.self)
        var streaming = caller
        streaming.partial = { continuation.yield(.partial($0)) }
        let asking = streaming
        Task {
            let answer = await commands.execute(checked, caller: asking)
            continuation.yield(.answer(answer))
            continuation.finish()
        }
        // The chat runs to its end even if the client goes: its answer joins the history.
        let headers: HTTPFields = [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store"]
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            for await item in items {
                switch item {
                case .partial(let text):
                    try await writer.write(ByteBuffer(string: "event: partial\ndata: \(JSONValue.object(["text": .string(text)]).serialized())\n\n"))
                case .answer(let answer):
                    try await writer.write(ByteBuffer(string: "event: answer\ndata: \(answer.serialized())\n\n"))
                }
            }
            try await writer.finish(nil)
        })
    }
}
