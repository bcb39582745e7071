import JSONSchema

/// A command's refusal, the same for every front: the control socket and the HTTP API answer
/// it as `{"ok": false, "code": …, "error": …, "pointer": …}` (HTTP with the status of its
/// code). The message says what was wrong and how to fix it.
public struct CommandError: Error, Sendable, Equatable {
    /// What kind of refusal (HTTP: 400, 404, 409, 412, 503…).
    public enum Code: String, Sendable, CaseIterable {
        case invalid, notFound = "not_found", conflict, unavailable, forbidden, unauthorized
        case tooLarge = "too_large", rateLimited = "rate_limited", failed
        /// An `if_match` that is no longer the current revision (HTTP 412): read again, redo.
        case preconditionFailed = "precondition_failed"
    }

    public var code: Code
    /// What went wrong and how to fix it.
    public var message: String
    /// The JSON pointer of the request member at fault, when one is.
    public var pointer: String?
    /// With `unavailable`: seconds after which the request may succeed (HTTP `Retry-After`).
    public var retryAfter: Int?
    /// Several problems (each `{"pointer", "message"}`), the first of which is `message`'s.
    public var errors: [JSONValue]?
    /// Members a feature adds to its refusals (memory's `key`, `scope`, `version`), after the
    /// others.
    public var details: JSONObject?

    public init(_ code: Code, _ message: String, pointer: String? = nil, retryAfter: Int? = nil, errors: [JSONValue]? = nil,
                details: JSONObject? = nil) {
        self.code = code
        self.message = message
        self.pointer = pointer
        self.retryAfter = retryAfter
        self.errors = errors
        self.details = details
    }

    public static func invalid(_ message: String, pointer: String? = nil) -> CommandError { CommandError(.invalid, message, pointer: pointer) }
    public static func notFound(_ message: String) -> CommandError { CommandError(.notFound, message) }
    public static func conflict(_ message: String) -> CommandError { CommandError(.conflict, message) }
    public static func unavailable(_ message: String, retryAfter: Int? = nil) -> CommandError {
        CommandError(.unavailable, message, retryAfter: retryAfter)
    }

    /// How every front refuses text that is not JSON (`what`: "the request", "the body"):
    /// `invalid`, where, and the pointer of the value at fault (a repeated key's member).
    public static func notJSON(_ error: JSONParseError, in what: String) -> CommandError {
        .invalid("\(what) is not valid JSON at line \(error.line), column \(error.column): \(error.message)", pointer: error.pointer)
    }

    /// The refusal of a command that comes while the agent stops.
    public static let stopping = CommandError(.unavailable, "the agent is stopping")

    /// The answer's JSON.
    public var json: JSONValue {
        var object: JSONObject = ["ok": false, "code": .string(code.rawValue), "error": .string(message)]
        if let pointer { object["pointer"] = .string(pointer) }
        if let retryAfter { object["retry_after"] = .number(JSONNumber(retryAfter)) }
        if let errors { object["errors"] = .array(errors) }
        for (key, value) in details ?? [:] where object[key] == nil { object[key] = value }
        return .object(object)
    }
}
