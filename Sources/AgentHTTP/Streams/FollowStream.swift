import AgentCommands
import Hummingbird
import JSONSchema

/// `?follow=1` on a command that pages with `after` and answers `next` (`events`, `logs`):
/// server-sent events. The stream runs the same command over and over with `after` set to the
/// last `next`, sending each new item as one event with an `id:` line, so that a client that
/// reconnects with `Last-Event-ID` resumes after the last item it received. It ends when the
/// client goes away (a write fails; a comment line every few seconds finds out while nothing
/// happens), when the command is refused (the agent is stopping) or when the front stops.
struct FollowStream: Sendable {
    /// What makes a command followable: a GET whose request has an integer `after` and whose
    /// answer has `next` and an array of items.
    struct Shape: Sendable {
        /// The answer's member that holds the items (`events`, `lines`).
        var items: String

        init?(_ command: CommandDescription) {
            guard command.method == "GET",
                  command.request["properties"]?["after"]?["type"]?.stringValue == "integer",
                  let answer = command.answer["properties"]?.objectValue, answer.contains(key: "next")
            else { return nil }
            let arrays = answer.keys.filter { answer[$0]?["type"]?.stringValue == "array" }
            guard arrays.count == 1 else { return nil }
            items = arrays[0]
        }
    }

    /// How often the command is run again while it finds nothing new.
    static let pollInterval: Duration = .milliseconds(250)
    /// How long a stream may stay silent before a comment line checks that the client is there.
    static let heartbeat: Duration = .seconds(5)

    let commands: CommandCenter
    let slots: StreamSlots

    /// The stream's response, or 503 when `slots` are all taken. The first page is asked for
    /// before the stream is answered: a request the command refuses (an unknown process, a
    /// bad value the schema lets through) gets the command's error and status (400, 404), not
    /// a 200 stream that ends at once.
    func response(_ command: CommandDescription, shape: Shape, request: JSONObject, after: Int?, caller: CommandCenter.Caller,
                  authorization: StreamAuthorization) async -> Response {
        guard let slot = slots.acquire() else {
            let reason = slots.isClosed ? "the agent is stopping" : "\(slots.limit) streams are open, the most the agent serves at once; close one, or poll without ?follow"
            return APIResponse.error(.serviceUnavailable, code: "unavailable", reason, headers: [.retryAfter: "5"])
        }
        var fields = request
        if let after { fields["after"] = .number(JSONNumber(after)) }
        let first = await commands.execute(.object(fields), caller: caller)
        guard first["ok"]?.boolValue == true else {
            return APIResponse.json(.object(first.objectValue ?? [:]), status: APIResponse.status(of: first))
        }
        let headers: HTTPFields = [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store"]
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            // The slot is given back when this closure is released, even if it never runs.
            withExtendedLifetime(slot) {}
            try await run(command, shape: shape, request: request, after: after, first: first, caller: caller, authorization: authorization, writer: &writer)
        })
    }

    private func run(_ command: CommandDescription, shape: Shape, request: JSONObject, after start: Int?, first: JSONValue,
                     caller: CommandCenter.Caller, authorization: StreamAuthorization, writer: inout any ResponseBodyWriter) async throws {
        var after = start
        var pending: JSONValue? = first
        let clock = ContinuousClock()
        var lastWrite = clock.now
        // Tells the client the stream is open, and how soon to reconnect once it ends.
        try await writer.write(Self.buffer("retry: 2000\n\n"))
        while !slots.isClosed, !Task.isCancelled {
            // Checked before each page: a token a reload revoked gets nothing more.
            guard authorization.holds else {
                try await writer.write(Self.buffer("event: end\ndata: \(StreamAuthorization.revoked.serialized())\n\n"))
                break
            }
            var fields = request
            if let after { fields["after"] = .number(JSONNumber(after)) }
            let answer: JSONValue
            if let ready = pending {
                answer = ready
                pending = nil
            } else {
                answer = await commands.execute(.object(fields), caller: caller)
            }
            guard answer["ok"]?.boolValue == true else {
                try await writer.write(Self.buffer("event: end\ndata: \(answer.serialized())\n\n"))
                break
            }
            let items = answer[shape.items]?.arrayValue ?? []
            let next = answer["next"]?.numberValue?.intValue
            if !items.isEmpty {
                var text = ""
                for (index, item) in items.enumerated() {
                    let id = (item["id"] ?? item["seq"])?.numberValue?.intValue ?? (index == items.count - 1 ? next : nil)
                    if let id { text += "id: \(id)\n" }
                    text += "data: \(item.serialized())\n\n"
                }
                try await writer.write(Self.buffer(text))
                lastWrite = clock.now
            } else if clock.now - lastWrite >= Self.heartbeat {
                try await writer.write(Self.buffer(": waiting\n\n"))
                lastWrite = clock.now
            }
            let moved = next != nil && next != after
            after = next ?? after
            // A full page: more may be waiting, so ask again at once.
            if moved, let limit = Self.pageSize(command, fields), items.count >= limit {
                continue
            }
            try await Task.sleep(for: Self.pollInterval)
        }
        if slots.isClosed {
            try await writer.write(Self.buffer("event: end\ndata: \(CommandCenter.stoppingAnswer.serialized())\n\n"))
        }
        try await writer.finish(nil)
    }

    /// The most items one answer holds: the request's `limit` (or `lines`), else its default.
    static func pageSize(_ command: CommandDescription, _ fields: JSONObject) -> Int? {
        for name in ["limit", "lines"] {
            if let value = fields[name]?.numberValue?.intValue { return value }
            if let value = command.request["properties"]?[name]?["default"]?.numberValue?.intValue { return value }
        }
        return nil
    }

    static func buffer(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    /// `?follow`'s value: absent or `0`/`false` → no stream; empty, `1` or `true` → a stream.
    static func wanted(_ value: Substring?) -> Bool? {
        switch value {
        case nil, "0"?, "false"?: false
        case ""?, "1"?, "true"?: true
        default: nil
        }
    }
}
