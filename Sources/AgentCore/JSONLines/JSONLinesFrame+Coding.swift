import JSONSchema

extension JSONLinesFrame {
    /// The frame's member name (`"emit"`, `"ready"`…).
    public var name: String {
        switch self {
        case .start: "start"
        case .event: "event"
        case .chat: "chat"
        case .run: "run"
        case .cancel: "cancel"
        case .stop: "stop"
        case .ready: "ready"
        case .emit: "emit"
        case .message: "message"
        case .alert: "alert"
        case .heartbeat: "heartbeat"
        case .state: "state"
        case .progress: "progress"
        case .result: "result"
        case .error: "error"
        case .answer: "answer"
        }
    }

    /// The frames the runtime writes; the program writes the others.
    public static let runtimeFrames: Set<String> = ["start", "event", "chat", "run", "cancel", "stop"]
    /// The frames the program writes.
    public static let programFrames: Set<String> = ["ready", "emit", "message", "alert", "heartbeat", "state", "progress", "result", "error", "answer"]

    /// Decodes one line (without its newline). Unknown members inside a frame are ignored (a
    /// later minor version may add some); an unknown frame is refused.
    public init(line: some Collection<UInt8>) throws(JSONLinesError) {
        let value: JSONValue
        do {
            value = try JSONValue.parse(line)
        } catch {
            throw JSONLinesError(.notJSON, at: error.pointer, "expected a line of JSON, found invalid JSON (\(error.message) at column \(error.column))")
        }
        try self.init(value: value)
    }

    /// Decodes a frame from its JSON value: an object with exactly one member.
    public init(value: JSONValue) throws(JSONLinesError) {
        guard case .object(let object) = value, object.count == 1, let name = object.keys.first, let body = object[name] else {
            let found = value.objectValue.map { $0.isEmpty ? "an empty object" : "an object with the members \($0.keys.map { "\"\($0)\"" }.joined(separator: ", "))" }
                ?? "\(value.typeName)"
            throw JSONLinesError(.malformed, "expected an object with exactly one member naming the frame (e.g. {\"emit\": {…}}), found \(found)")
        }
        let reader = FrameReader(frame: name, body: body)
        switch name {
        case "start": self = .start(Start(settings: try reader.value("settings") ?? .object([:]), process: try reader.string("process"),
                                          type: try reader.optionalString("type"), state: try reader.value("state"),
                                          watchdog: try reader.optionalNumber("watchdog")))
        case "event": self = .event(Event(type: try reader.string("type"), source: try reader.optionalString("source") ?? "",
                                          time: try reader.optionalNumber("time") ?? 0, payload: try reader.value("payload") ?? .null))
        case "chat": self = .chat(Chat(message: try reader.string("message"), context: try reader.value("context") ?? .object([:]), id: try reader.optionalString("id")))
        case "run": self = .run(Run(id: try reader.string("id"), input: try reader.value("input") ?? .null))
        case "cancel": self = .cancel(id: try reader.string("id"))
        case "stop": try reader.requireTrue(); self = .stop
        case "ready": try reader.requireTrue(); self = .ready
        case "heartbeat": try reader.requireTrue(); self = .heartbeat
        case "emit": self = .emit(Emit(type: try reader.eventType("type"), payload: try reader.value("payload") ?? .null))
        case "message": self = .message(Message(level: try reader.level(), text: try reader.string("text")))
        case "alert": self = .alert(try reader.textOrString("text"))
        case "state": self = .state(body)
        case "progress": self = .progress(Progress(id: try reader.string("id"), fraction: try reader.optionalNumber("fraction"), message: try reader.optionalString("message")))
        case "result": self = .result(Result(id: try reader.string("id"), output: try reader.value("output") ?? .null))
        case "error": self = .error(Failure(id: try body.stringValue == nil ? reader.optionalString("id") : nil, message: try reader.textOrString("message")))
        case "answer": self = .answer(Answer(confidence: try reader.confidence(), text: try reader.string("text"), id: try reader.optionalString("id")))
        default:
            let known = (Self.runtimeFrames.union(Self.programFrames)).sorted().joined(separator: ", ")
            throw JSONLinesError(.malformed, at: "/" + JSONPointer.escape(name), "expected one of the frames \(known), found \"\(name)\"")
        }
    }

    /// The frame as a JSON value (`{"name": body}`).
    public var value: JSONValue {
        func object(_ pairs: [(String, JSONValue?)]) -> JSONValue {
            .object(JSONObject(pairs.compactMap { key, value in value.map { (key, $0) } }))
        }
        let body: JSONValue
        switch self {
        case .start(let start): body = object([("settings", start.settings), ("process", .string(start.process)), ("type", start.type.map(JSONValue.string)),
                                                   ("state", start.state), ("watchdog", start.watchdog.map { .number(JSONNumber($0)) })])
        case .event(let event): body = object([("type", .string(event.type)), ("source", .string(event.source)), ("time", .number(JSONNumber(event.time))), ("payload", event.payload)])
        case .chat(let chat): body = object([("message", .string(chat.message)), ("context", chat.context), ("id", chat.id.map(JSONValue.string))])
        case .run(let run): body = object([("id", .string(run.id)), ("input", run.input)])
        case .cancel(let id): body = object([("id", .string(id))])
        case .stop, .ready, .heartbeat: body = .bool(true)
        case .emit(let emit): body = object([("type", .string(emit.type)), ("payload", emit.payload)])
        case .message(let message): body = object([("level", .string(message.level.rawValue)), ("text", .string(message.text))])
        case .alert(let text): body = object([("text", .string(text))])
        case .state(let state): body = state
        case .progress(let progress): body = object([("id", .string(progress.id)), ("fraction", progress.fraction.map { .number(JSONNumber($0)) }), ("message", progress.message.map(JSONValue.string))])
        case .result(let result): body = object([("id", .string(result.id)), ("output", result.output)])
        case .error(let failure): body = object([("id", failure.id.map(JSONValue.string)), ("message", .string(failure.message))])
        case .answer(let answer): body = object([("confidence", .number(JSONNumber(answer.confidence))), ("text", .string(answer.text)), ("id", answer.id.map(JSONValue.string))])
        }
        return .object([name: body])
    }

    /// The frame's line: compact JSON and a newline.
    public var line: [UInt8] {
        var bytes = value.serializedBytes()
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }
}

extension JSONLinesFrame: Codable {
    public init(from decoder: any Decoder) throws {
        try self.init(value: try JSONValue(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
    }
}

/// Reads a frame's members, each refusal naming the member's pointer, what was expected and
/// what was found.
private struct FrameReader {
    var frame: String
    var body: JSONValue

    private func refuse(_ member: String?, _ expected: String, _ found: JSONValue?) -> JSONLinesError {
        let pointer = "/" + JSONPointer.escape(frame) + (member.map { "/" + JSONPointer.escape($0) } ?? "")
        let what = found.map { "\(Self.excerpt($0)) (\($0.typeName))" } ?? "nothing (the member is missing)"
        return JSONLinesError(.malformed, at: pointer, "expected \(expected), found \(what)")
    }

    /// A value's text, cut to 80 characters (a refused line may be megabytes).
    static func excerpt(_ value: JSONValue) -> String {
        let text = value.serialized()
        return text.count <= 80 ? text : String(text.prefix(77)) + "…"
    }

    private func members() throws(JSONLinesError) -> JSONObject {
        guard let object = body.objectValue else { throw refuse(nil, "an object", body) }
        return object
    }

    func value(_ key: String) throws(JSONLinesError) -> JSONValue? { try members()[key] }

    func string(_ key: String) throws(JSONLinesError) -> String {
        let found = try members()[key]
        guard let text = found?.stringValue else { throw refuse(key, "a string", found) }
        return text
    }

    /// The body itself when it is a string (`{"alert": "frost"}`), else its member `key`.
    func textOrString(_ key: String) throws(JSONLinesError) -> String {
        if let text = body.stringValue { return text }
        return try string(key)
    }

    func nonEmptyString(_ key: String) throws(JSONLinesError) -> String {
        let text = try string(key)
        guard !text.isEmpty, text.utf8.count <= 0xFFFF else { throw refuse(key, "a non-empty string of at most 65535 bytes", .string(text)) }
        return text
    }

    /// An event's type: no control character (a NUL cut it short where it was stored, not
    /// where it was routed; an escape reached the terminal of whoever listed the events).
    func eventType(_ key: String) throws(JSONLinesError) -> String {
        let text = try nonEmptyString(key)
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw refuse(key, "an event type without control characters (U+0000–U+001F, U+007F–U+009F)", .string(text))
        }
        return text
    }

    func optionalString(_ key: String) throws(JSONLinesError) -> String? {
        guard let found = try members()[key], !found.isNull else { return nil }
        guard let text = found.stringValue else { throw refuse(key, "a string", found) }
        return text
    }

    func optionalNumber(_ key: String) throws(JSONLinesError) -> Double? {
        guard let found = try members()[key], !found.isNull else { return nil }
        guard let number = found.numberValue?.doubleValue, number.isFinite else { throw refuse(key, "a finite number", found) }
        return number
    }

    func confidence() throws(JSONLinesError) -> Double {
        let found = try members()["confidence"]
        guard let number = found?.numberValue?.doubleValue, number >= 0, number <= 1 else { throw refuse("confidence", "a number from 0 to 1", found) }
        return number
    }

    func level() throws(JSONLinesError) -> JSONLinesFrame.Message.Level {
        guard let found = try members()["level"], !found.isNull else { return .info }
        let names = JSONLinesFrame.Message.Level.allCases.map(\.rawValue)
        guard let level = found.stringValue.flatMap(JSONLinesFrame.Message.Level.init(rawValue:)) else {
            throw refuse("level", "one of \(names.joined(separator: ", "))", found)
        }
        return level
    }

    func requireTrue() throws(JSONLinesError) {
        guard body.boolValue == true else { throw refuse(nil, "true", body) }
    }
}
