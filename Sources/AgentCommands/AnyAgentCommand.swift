import AgentBase
import JSONSchema

/// A command of the registry whatever its types (see ``AgentCommand``): its declarations (one
/// per HTTP route), its request schema with its validator compiled once, and how to decode,
/// run and encode it.
public struct AnyAgentCommand: Sendable {
    /// Runs a validated request on the hosts; calls the last argument with the answer.
    typealias Invoke = @Sendable (JSONValue, CommandCaller, any CommandHosts, @escaping (JSONValue) -> Void) -> Void

    public let name: String
    public let summary: String
    /// One per HTTP route, in order (`process` has start, stop, restart).
    public let declarations: [CommandDescription]
    /// The request's members as every front checks them: the declared ones and those the
    /// routes fix (`action`), without `command`.
    public let requestSchema: JSONValue
    public let answerSchema: JSONValue
    public let mutating: Bool
    public let requiresAdmin: Bool
    public let executor: CommandDescription.Executor
    let invoke: Invoke
    private let validator: JSONSchemaValidator?
    private let properties: JSONObject
    /// The members the request schema requires, in its order.
    private let required: [String]
    /// Whether a request without members passes (then it is not validated again).
    private let emptyIsValid: Bool
    /// Why a request the schema passes does not decode (a number its Swift type cannot hold:
    /// `2^63`, `1e-999999`), or nil.
    private let decodingProblem: @Sendable (JSONValue) -> CommandError?

    private init(declarations: [CommandDescription], invoke: @escaping Invoke,
                 decodingProblem: @escaping @Sendable (JSONValue) -> CommandError?) {
        let first = declarations[0]
        name = first.name
        summary = first.summary
        self.declarations = declarations
        requestSchema = Self.withFixedMembers(first.request, declarations.map(\.fixed))
        answerSchema = first.answer
        mutating = first.mutating
        requiresAdmin = first.requiresAdmin
        executor = first.executor
        self.invoke = invoke
        self.decodingProblem = decodingProblem
        properties = requestSchema["properties"]?.objectValue ?? [:]
        required = requestSchema["required"]?.arrayValue?.compactMap(\.stringValue) ?? []
        validator = try? JSONSchemaValidator(schema: requestSchema)
        emptyIsValid = validator.map { $0.validate(.object([:])).isEmpty } ?? true
    }

    /// A typed command.
    init<C: AgentCommand>(_ command: C.Type) {
        let declarations = C.routes.map { route in
            CommandDescription(name: C.name, summary: C.summary, method: route.method, path: route.path, fixed: route.fixed,
                               request: Self.withoutMembers(C.requestSchema, Array(route.fixed.keys)), answer: C.answerSchema,
                               mutating: C.mutating, requiresAdmin: C.requiresAdmin, adminReason: C.adminReason,
                               executor: C.self is any StoreReadCommand.Type ? .store : .loop)
        }
        self.init(declarations: declarations, invoke: { request, caller, hosts, respond in
            TypedCommand<C>.invoke(request, caller: caller, hosts: hosts, respond: respond)
        }, decodingProblem: { request in
            do {
                _ = try JSONValueDecoder().decode(C.Request.self, from: request)
                return nil
            } catch {
                return JSONValueDecoder.refusal(of: error)
            }
        })
    }

    /// The first problem of `fields` (a request's members without `command`), as HTTP and the
    /// control socket answer it: the validator's message with the member's pointer, else the
    /// decoder's (a request answered from a snapshot is decoded nowhere else that refuses).
    public func problem(in fields: JSONObject) -> CommandError? {
        if fields.isEmpty, emptyIsValid { return nil }
        guard let validator, let first = validator.validate(.object(fields)).first else { return decodingProblem(.object(fields)) }
        var pointer = first.instanceLocation
        var message = first.message
        // An unknown or missing member is reported at its object; point at the member itself.
        if pointer.isEmpty, first.keywordLocation.hasSuffix("additionalProperties"),
           let unknown = fields.keys.first(where: { properties[$0] == nil }) {
            pointer = "/" + JSONPointer.escape(unknown)
            if properties.isEmpty { message += "; \(name) takes no members" }
        } else if pointer.isEmpty, first.keywordLocation.hasSuffix("required"),
                  let missing = required.first(where: { fields[$0] == nil }) {
            pointer = "/" + JSONPointer.escape(missing)
        } else if first.keywordLocation.hasSuffix("/pattern"), let tokens = JSONPointer(pointer)?.tokens, tokens.count == 1,
                  let description = properties[tokens[0]]?["description"]?.stringValue {
            // A pattern says what it takes, not why: the member's description does.
            message += " (\(description))"
        }
        return .invalid((pointer.isEmpty ? "" : "\(pointer): ") + message, pointer: pointer)
    }

    /// `schema` with the members routes fix, each an `enum` of its values, required.
    static func withFixedMembers(_ schema: JSONValue, _ fixed: [JSONObject]) -> JSONValue {
        guard case .object(var object) = schema, let keys = fixed.first?.keys, !keys.isEmpty else { return schema }
        var properties = object["properties"]?.objectValue ?? [:]
        var required = object["required"]?.arrayValue ?? []
        for key in keys {
            var values: [JSONValue] = []
            for members in fixed { if let value = members[key], !values.contains(value) { values.append(value) } }
            properties[key] = ["enum": .array(values)]
            if !required.contains(.string(key)) { required.append(.string(key)) }
        }
        object["properties"] = .object(properties)
        object["required"] = .array(required)
        return .object(object)
    }

    /// `schema` without the members `keys` (those a route fixes, as the route shows its request).
    static func withoutMembers(_ schema: JSONValue, _ keys: [String]) -> JSONValue {
        guard !keys.isEmpty, case .object(var object) = schema else { return schema }
        var properties = object["properties"]?.objectValue ?? [:]
        var kept = JSONObject()
        for (key, value) in properties where !keys.contains(key) { kept[key] = value }
        properties = kept
        object["properties"] = .object(properties)
        let required = (object["required"]?.arrayValue ?? []).filter { !keys.contains($0.stringValue ?? "") }
        object["required"] = required.isEmpty ? nil : .array(required)
        return .object(object)
    }
}

/// How the registry runs a typed command: host, stopping, decode, run, encode.
enum TypedCommand<C: AgentCommand> {
    static func invoke(_ request: JSONValue, caller: CommandCaller, hosts: any CommandHosts, respond: @escaping (JSONValue) -> Void) {
        guard C.answersWhileStopping || !hosts.isStopping else { return respond(CommandError.stopping.json) }
        guard let host = hosts.host(C.Host.self) else { return respond(C.unavailable.json) }
        let decoded: C.Request
        do {
            decoded = try JSONValueDecoder().decode(C.Request.self, from: request)
        } catch {
            return respond(JSONValueDecoder.refusal(of: error).json)
        }
        C.run(decoded, on: host, caller: caller) { result in
            switch result {
            case .success(let answer):
                do {
                    respond(try JSONValueEncoder().encode(answer))
                } catch {
                    respond(CommandError(.failed, "the answer of \(C.name) could not be encoded: \(error)").json)
                }
            case .failure(let refusal):
                respond(refusal.json)
            }
        }
    }
}
