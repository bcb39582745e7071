import AgentBase
import JSONSchema

/// One command of the command layer, declared once: its name on the control socket, its HTTP
/// route, the JSON Schemas of its request and answer, and whether it changes anything. The
/// HTTP routes and the OpenAPI document are made from these declarations.
public struct CommandDescription: Sendable {
    /// Where the command is executed.
    public enum Executor: Sendable {
        /// On the supervisor's loop (everything that reads or changes supervision state).
        case loop
        /// On a thread of its own, reading the store (events, history): never on the loop.
        case store
    }

    /// The `command` of the request.
    public var name: String
    /// One line for help and the OpenAPI document.
    public var summary: String
    /// `GET`, `POST`, `PUT`, `DELETE`.
    public var method: String
    /// The route, with `{name}` for a path parameter: `/api/processes/{name}/stop`.
    public var path: String
    /// Request fields the route fixes (`"action": "stop"`), not given by the client.
    public var fixed: JSONObject
    /// The request's fields (path parameters, query parameters for GET, the JSON body
    /// otherwise) as a JSON Schema object.
    public var request: JSONValue
    /// The schema of a successful answer.
    public var answer: JSONValue
    /// Changes something: needs the admin role, a CSRF check from a browser, and is audited.
    public var mutating: Bool
    /// Needs the admin role over HTTP though it changes nothing: `validate`, which loads the
    /// modules a given document names (their code runs in a describe worker).
    public var requiresAdmin: Bool
    /// Why the read role may not send it (see ``AgentCommand/adminReason``).
    public var adminReason: String
    /// A token granted this may send it without the admin role (see ``AgentCommand/grant``).
    public var grant: String?
    public var executor: Executor
    /// The body is a file put base64 in a member (see ``CommandRoute/binaryBody``).
    public var binaryBody: CommandRoute.BinaryBody?

    public init(name: String, summary: String, method: String, path: String, fixed: JSONObject = [:],
                request: JSONValue = CommandDescription.noFields, answer: JSONValue = CommandDescription.okAnswer,
                mutating: Bool, requiresAdmin: Bool? = nil, adminReason: String = "it changes something", grant: String? = nil,
                executor: Executor = .loop) {
        self.name = name
        self.summary = summary
        self.method = method
        self.path = path
        self.fixed = fixed
        self.request = request
        self.answer = answer
        self.mutating = mutating
        self.requiresAdmin = requiresAdmin ?? mutating
        self.adminReason = adminReason
        self.grant = grant
        self.executor = executor
    }

    /// The names of the path's `{parameters}`, in order.
    public var pathParameters: [String] {
        path.split(separator: "/").compactMap { part in
            part.hasPrefix("{") && part.hasSuffix("}") ? String(part.dropFirst().dropLast()) : nil
        }
    }

    /// A request without fields.
    public static let noFields: JSONValue = CommandSchema.noFields
    /// `{"ok": true}`.
    public static let okAnswer: JSONValue = CommandSchema.okAnswer
    /// `{"ok": false, "error": …, "code": …}`.
    public static let errorAnswer: JSONValue = [
        "type": "object", "required": ["ok", "error"],
        "properties": [
            "ok": ["const": false],
            "error": ["type": "string", "description": "What went wrong and how to fix it."],
            "code": ["type": "string", "enum": ["invalid", "not_found", "conflict", "unavailable", "forbidden", "unauthorized", "too_large", "rate_limited", "unsupported_media_type", "failed", "precondition_failed"]],
            "pointer": ["type": "string", "description": "The JSON pointer of the offending field in the request, when one is at fault."],
            "retry_after": ["type": "integer", "description": "With `unavailable`: seconds after which the request may succeed (HTTP sends it as `Retry-After`)."],
            "errors": ["type": "array", "items": ["type": "object", "properties": [
                "file": ["type": "string"], "pointer": ["type": "string"], "message": ["type": "string"],
            ]]],
        ],
    ]

    /// An object schema with these properties (`required` lists the required ones).
    public static func object(_ properties: JSONObject, required: [String] = [], open: Bool = false) -> JSONValue {
        CommandSchema.object(properties, required: required, open: open)
    }
}
