import AgentBase
import AgentCommands
import Foundation
import Hummingbird
import JSONSchema

/// The API routes: one per route of the registry's commands (``CommandRegistry``), each a thin
/// translation of the HTTP request (path parameters, query or JSON body) into the command's
/// request, checked by the registry as the control socket checks it, executed by the command
/// layer.
struct CommandRoutes: Sendable {
    let commands: CommandCenter
    let maximumBodyBytes: Int
    /// The `?follow` streams of the commands that have them.
    let streams: FollowStream
    /// The tokens and users in force, and the sessions: a `?follow` stream checks them before each page.
    let credentials: HTTPCredentials
    let sessions: SessionTable

    /// What a route needs of its command for every request, worked out once.
    struct Route: Sendable {
        let command: CommandDescription
        /// The registry's command (its validator).
        let registered: AnyAgentCommand
        /// The request schema's properties.
        let properties: JSONObject
        let pathParameters: [String]
        /// The `?follow` stream of the command, if it has one.
        let stream: FollowStream.Shape?
        /// Whether the answer is made from a snapshot, the same for every caller (the caller's
        /// address is then not worked out).
        let fromSnapshot: Bool

        init(_ command: CommandDescription, of registered: AnyAgentCommand) {
            self.command = command
            self.registered = registered
            properties = command.request["properties"]?.objectValue ?? [:]
            pathParameters = command.pathParameters
            stream = FollowStream.Shape(command)
            fromSnapshot = CommandCenter.answersFromSnapshot(command.name)
        }
    }

    init(commands: CommandCenter, maximumBodyBytes: Int, streams: StreamSlots, credentials: HTTPCredentials, sessions: SessionTable) {
        self.commands = commands
        self.maximumBodyBytes = maximumBodyBytes
        self.streams = FollowStream(commands: commands, slots: streams)
        self.credentials = credentials
        self.sessions = sessions
    }

    func register(on router: Router<AgentRequestContext>) {
        for registered in CommandRegistry.standard.commands {
            for command in registered.declarations {
                let method = HTTPRequest.Method(rawValue: command.method) ?? .get
                let route = Route(command, of: registered)
                router.on(RouterPath(command.path), method: method) { request, context in
                    await respond(route, request: request, context: context)
                }
            }
        }
    }

    func respond(_ route: Route, request: Request, context: AgentRequestContext) async -> Response {
        let command = route.command
        if let refusal = AccessPolicy.roleRefusal(command, context.identity) {
            commands.recordAudit("\(request.method) \(request.uri.path) → refused (\(refusal.status.code)): \(refusal.message)",
                                 caller: CommandCenter.Caller(front: "http", user: context.identity?.name, address: context.remoteAddress))
            return refusal.response
        }
        let fields: JSONObject
        let checked: CheckedRequest
        switch await self.fields(of: route, request: request, context: context) {
        case .success(let found): (fields, checked) = found
        case .failure(let refusal): return refusal.response
        }
        let caller = CommandCenter.Caller(front: "http", user: context.identity?.name, address: route.fromSnapshot ? nil : context.remoteAddress,
                                          role: context.identity?.role.rawValue)
        if let shape = route.stream, FollowStream.wanted(request.uri.queryParameters["follow"]) == true {
            // Last-Event-ID (a reconnecting EventSource) resumes after the last item received.
            let resume = request.headers[.init("Last-Event-ID")!].flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil }
            let authorization = StreamAuthorization(request, identity: context.identity, credentials: credentials, sessions: sessions)
            return await streams.response(command, shape: shape, request: checked.json.objectValue ?? [:], after: resume ?? fields["after"]?.numberValue?.intValue,
                                          caller: caller, authorization: authorization)
        }
        if ChatAnswerStream.wanted(request, checked) { return ChatAnswerStream.response(commands, checked, caller: caller) }
        // `status` comes serialized once for every request of its batch (see executeRendered).
        let answer = await commands.executeRendered(checked, caller: caller)
        return APIResponse.json(answer)
    }

    /// A request refused before it reaches the command layer.
    struct Refusal: Error {
        var response: Response
        init(response: Response) { self.response = response }
        init(_ status: HTTPResponse.Status, code: String, _ message: String, pointer: String? = nil) {
            response = APIResponse.error(status, code: code, message, pointer: pointer)
        }
        init(_ error: CommandError) {
            response = APIResponse.json(error.json, status: APIResponse.status(of: error.json))
        }
    }

    /// The command's request fields: path parameters, then the query (GET, DELETE) or the
    /// JSON body; and the request they make with the members the route fixes, checked by the
    /// registry against the command's schema.
    func fields(of route: Route, request: Request, context: AgentRequestContext) async -> Result<(JSONObject, CheckedRequest), Refusal> {
        let command = route.command
        var fields = JSONObject()
        let properties = route.properties
        if command.method == "GET" || command.method == "DELETE" {
            for (key, value) in request.uri.queryParameters {
                let name = String(key)
                // `follow` belongs to the stream, not to the command.
                if name == "follow", route.stream != nil {
                    guard FollowStream.wanted(value) != nil else {
                        return .failure(Refusal(.invalid("/follow: expected 1, true, 0 or false; found \"\(value)\"", pointer: "/follow")))
                    }
                    continue
                }
                // A repeated parameter is refused as a repeated key of a body is (the last
                // one would win, unseen by whoever checked the first).
                guard fields[name] == nil else { return .failure(Self.repeated(name)) }
                // An unknown one is left to the registry's check, which words it as for a body.
                fields[name] = properties[name].map { Self.typed(String(value), as: $0) } ?? .string(String(value))
            }
        } else if let binary = command.binaryBody, let type = Self.mediaType(request), binary.mediaTypes.contains(type) || type == "application/octet-stream" {
            // A file body (a voice message's WAV): base64 in its member, the rest from the query.
            let body: ByteBuffer
            switch await APIRequestBody.collect(request, limit: maximumBodyBytes) {
            case .success(let collected): body = collected
            case .failure(let refusal): return .failure(Refusal(response: refusal.response))
            }
            fields[binary.member] = .string(Data(body.readableBytesView).base64EncodedString())
            for (key, value) in request.uri.queryParameters where String(key) != binary.member {
                let name = String(key)
                guard fields[name] == nil else { return .failure(Self.repeated(name)) }
                fields[name] = properties[name].map { Self.typed(String(value), as: $0) } ?? .string(String(value))
            }
        } else {
            // Members come from the body alone: a query beside it went unread, a stale
            // `?if_match=` let a change overwrite the file.
            if let (name, _) = request.uri.queryParameters.first {
                return .failure(Self.queryBesideBody(String(name), method: command.method, ifMatch: properties["if_match"] != nil))
            }
            // The one rule for bodies (APIRequestBody): JSON, or an HTML form's fields (typed by
            // the schema like a query; `csrf` belongs to the CSRF check, not to the command).
            switch await APIRequestBody.read(request, limit: maximumBodyBytes) {
            case .failure(let refusal): return .failure(Refusal(response: refusal.response))
            case .success(.empty): break
            case .success(.form(let pairs)):
                for (name, value) in pairs where name != CSRFProtection.formField {
                    fields[name] = properties[name].map { Self.typed(value, as: $0) } ?? .string(value)
                }
            case .success(.json(let value)):
                guard case .object(let object) = value else {
                    return .failure(Refusal(.badRequest, code: "invalid", "the body must be a JSON object; found \(Describe.value(value))", pointer: ""))
                }
                fields = object
            }
        }
        for name in route.pathParameters {
            // The router leaves segments escaped: a replica's `NAME#2` comes as `NAME%232`.
            guard let raw = context.parameters.get(name) else { continue }
            let value = raw.removingPercentEncoding ?? raw
            if fields[name] != nil, fields[name] != .string(value) {
                return .failure(Refusal(.invalid("/\(name): given by the path (\(value)); leave it out of the body", pointer: "/" + name)))
            }
            fields[name] = .string(value)
        }
        if let refusal = Self.takeIfMatch(request, into: &fields, properties: properties) { return .failure(refusal) }
        // Checked with the members the route fixes, as the control socket checks a request.
        var checked = fields
        for (name, value) in command.fixed {
            if let given = fields[name], given != value {
                return .failure(Refusal(.invalid("/\(name): given by the route (\(value.serialized())); leave it out", pointer: "/" + name)))
            }
            checked[name] = value
        }
        switch CommandRegistry.standard.check(checked, for: route.registered) {
        case .success(let request): return .success((fields, request))
        case .failure(let problem): return .failure(Refusal(problem))
        }
    }

    /// A query parameter given twice: refused as a repeated key of a body is (the last one
    /// would win, unseen by whoever checked the first).
    static func repeated(_ name: String) -> Refusal {
        Refusal(.invalid("the query parameter \"\(name)\" appears twice; keep one of them", pointer: "/" + JSONPointer.escape(name)))
    }

    /// A query parameter on a request whose members come from its body.
    static func queryBesideBody(_ name: String, method: String, ifMatch: Bool) -> Refusal {
        let instead = name == "if_match" && ifMatch ? "send it in the body or as the If-Match header" : "send it in the body"
        return Refusal(.invalid("the query parameter \"\(name)\" is not read on a \(method) request: \(instead)", pointer: "/" + JSONPointer.escape(name)))
    }

    /// HTTP's `If-Match` header as the request's `if_match`, for a command that takes one (the
    /// settings changes): the hash as `settings_get` and the resources' reads answer it, quoted
    /// as an ETag or not. Refused when the body says otherwise.
    static func takeIfMatch(_ request: Request, into fields: inout JSONObject, properties: JSONObject) -> Refusal? {
        guard properties["if_match"] != nil, let header = request.headers[.ifMatch] else { return nil }
        var value = Substring(header.trimmingCharacters(in: .whitespaces))
        if value.hasPrefix("W/") { value = value.dropFirst(2) }
        if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
        if let given = fields["if_match"], given != .string(String(value)) {
            return Refusal(.invalid("/if_match: the body's if_match and the If-Match header differ; send one of them", pointer: "/if_match"))
        }
        fields["if_match"] = .string(String(value))
        return nil
    }

    /// The request's media type, lower case, without parameters (`audio/wav`); empty for an
    /// empty header or one of parameters only (`;`), which no split may index.
    static func mediaType(_ request: Request) -> String? {
        request.headers[.contentType].map { $0.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces).lowercased() }
    }

    /// A query value as the type its schema asks for, when it reads as one (else the string,
    /// which validation then refuses with what it expected).
    /// The number must be the whole value (`%205%20` is no number), and a member that takes a
    /// number or a string (`since`) takes a number's text as the number, as a body has it.
    static func typed(_ text: String, as schema: JSONValue) -> JSONValue {
        let types = schema["type"].map { $0.arrayValue?.compactMap(\.stringValue) ?? [$0.stringValue ?? ""] } ?? []
        // JSON's whitespace is all at or below the space.
        if types.contains("integer") || types.contains("number"), let first = text.utf8.first, first > 0x20, text.utf8.last! > 0x20,
           let value = try? JSONValue.parse(text), value.numberValue != nil {
            return value
        }
        if types == ["boolean"] {
            if text == "true" || text == "1" { return true }
            if text == "false" || text == "0" { return false }
        }
        return .string(text)
    }
}
