import AgentBase
import AgentLoop
import JSONSchema

/// A command of the registry whatever its types (see ``AgentCommand``): its declarations (one
/// per HTTP route), its request schema with its validator compiled once, and how to check,
/// decode, run and encode it.
public struct AnyAgentCommand: Sendable {
    /// Runs a checked request (its decoded ``AgentCommand/Request``, see ``CheckedRequest``)
    /// on the hosts, on the loop; calls the last argument with the answer.
    typealias Invoke = @Sendable @LoopActor (any Sendable, CommandCaller, any CommandHosts, @escaping (JSONValue) -> Void) -> Void

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
    /// A store read's answer, read and encoded on the caller's thread (nil for the others).
    let readStore: (@Sendable (any Sendable, _ storePath: String?, CommandCaller) -> JSONValue)?
    private let validator: JSONSchemaValidator?
    private let properties: JSONObject
    /// The members the request schema requires, in its order.
    private let required: [String]
    /// A request without members, decoded once (nil: the schema refuses it).
    private let emptyRequest: (any Sendable)?
    /// Decodes the members of a request the schema passes, or says why they do not decode
    /// (a number its Swift type cannot hold: `2^63`, `1e-999999`).
    private let decode: @Sendable (JSONValue) -> Result<any Sendable, CommandError>

    private init(declarations: [CommandDescription], invoke: @escaping Invoke,
                 readStore: (@Sendable (any Sendable, String?, CommandCaller) -> JSONValue)? = nil,
                 decode: @escaping @Sendable (JSONValue) -> Result<any Sendable, CommandError>) {
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
        self.readStore = readStore
        self.decode = decode
        properties = requestSchema["properties"]?.objectValue ?? [:]
        required = requestSchema["required"]?.arrayValue?.compactMap(\.stringValue) ?? []
        validator = try? JSONSchemaValidator(schema: requestSchema)
        let emptyIsValid = validator.map { $0.validate(.object([:])).isEmpty } ?? true
        emptyRequest = emptyIsValid ? (try? decode(.object([:])).get()) : nil
    }

    /// A typed command.
    init<C: AgentCommand>(_ command: C.Type) {
        self.init(declarations: Self.declarations(of: C.self, executor: .loop), invoke: { decoded, caller, hosts, respond in
            guard let request = decoded as? C.Request else { return respond(Self.notItsRequest(C.self).json) }
            TypedCommand<C>.invoke(request, caller: caller, hosts: hosts, respond: respond)
        }, decode: Self.decoder(of: C.self))
    }

    /// A store read: answered off the loop, read and encoded where it is read (see ``StoreRead``).
    init<C: StoreReadCommand>(storeRead command: C.Type) {
        self.init(declarations: Self.declarations(of: C.self, executor: .store), invoke: { decoded, caller, hosts, respond in
            guard let request = decoded as? C.Request else { return respond(Self.notItsRequest(C.self).json) }
            switch C.scoped(request, caller: caller) {
            case .success(let scoped): StoreRead<C>.invoke(scoped, hosts: hosts, respond: respond)
            case .failure(let refusal): respond(refusal.json)
            }
        }, readStore: { decoded, storePath, caller in
            guard let request = decoded as? C.Request else { return Self.notItsRequest(C.self).json }
            switch C.scoped(request, caller: caller) {
            case .success(let scoped): return StoreRead<C>.encoded(scoped, storePath: storePath)
            case .failure(let refusal): return refusal.json
            }
        }, decode: Self.decoder(of: C.self))
    }

    private static func declarations<C: AgentCommand>(of command: C.Type, executor: CommandDescription.Executor) -> [CommandDescription] {
        C.routes.map { route in
            var description = CommandDescription(name: C.name, summary: C.summary, method: route.method, path: route.path, fixed: route.fixed,
                               request: Self.withoutMembers(C.requestSchema, Array(route.fixed.keys)), answer: C.answerSchema,
                               mutating: C.mutating, requiresAdmin: C.requiresAdmin, adminReason: C.adminReason,
                               grant: C.grant, executor: executor)
            description.binaryBody = route.binaryBody
            return description
        }
    }

    private static func decoder<C: AgentCommand>(of command: C.Type) -> @Sendable (JSONValue) -> Result<any Sendable, CommandError> {
        { members in
            do {
                let request = try JSONValueDecoder().decode(C.Request.self, from: members)
                if let checking = request as? any SelfCheckingRequest, let problem = checking.problem() { return .failure(problem) }
                return .success(request)
            } catch {
                return .failure(JSONValueDecoder.refusal(of: error))
            }
        }
    }

    /// Only a checked request of this command reaches its `invoke` (the registry pairs them).
    private static func notItsRequest<C: AgentCommand>(_ command: C.Type) -> CommandError {
        CommandError(.failed, "\(C.name) was given a request checked for another command")
    }

    /// `fields` (a request's members without `command`) checked as HTTP and the control
    /// socket check them, and decoded: the refusal is the validator's message with the member's
    /// pointer, else the decoder's (a request answered from a snapshot is decoded nowhere else
    /// that refuses). Decoded once: the command runs with this value (``CheckedRequest``).
    func checked(_ fields: JSONObject) -> Result<any Sendable, CommandError> {
        if fields.isEmpty, let emptyRequest { return .success(emptyRequest) }
        guard let validator, let first = validator.validate(.object(fields)).first else { return decode(.object(fields)) }
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
        return .failure(.invalid((pointer.isEmpty ? "" : "\(pointer): ") + message, pointer: pointer))
    }

    /// The first problem of `fields` (see ``checked(_:)``), nil when they pass.
    public func problem(in fields: JSONObject) -> CommandError? {
        guard case .failure(let problem) = checked(fields) else { return nil }
        return problem
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

/// How the registry runs a typed command (its request checked and decoded by
/// ``CommandRegistry/check(_:)``): stopping, host, run, encode.
enum TypedCommand<C: AgentCommand> {
    @LoopActor static func invoke(_ request: C.Request, caller: CommandCaller, hosts: any CommandHosts, respond: @escaping (JSONValue) -> Void) {
        guard C.answersWhileStopping || !hosts.isStopping else { return respond(CommandError.stopping.json) }
        guard let host = hosts.host(C.Host.self) else { return respond(C.unavailable.json) }
        C.run(request, on: host, caller: caller) { result in
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
