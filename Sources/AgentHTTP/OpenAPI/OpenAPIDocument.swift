import AgentCommands
import AgentVersion
import JSONSchema

/// The OpenAPI 3.1 document of the API (`GET /api/openapi.json`), made from the same
/// declarations the routes are made from: every command of ``CommandCatalog`` (its route, its
/// path, query or body fields and the schemas of its answers) and the other routes
/// (``RouteDescription``). A command added to the catalog is in the document without more.
enum OpenAPIDocument {
    /// The document for `commands` and `routes`.
    static func make(commands: [CommandDescription], routes: [RouteDescription]) -> JSONValue {
        var paths = JSONObject()
        var operationIDs = Set<String>()
        func add(_ method: String, _ path: String, _ operation: JSONObject) {
            var operation = operation
            // Two commands on one route name (process start, stop): the action tells them apart.
            var id = operation["operationId"]?.stringValue ?? "operation"
            while operationIDs.contains(id) { id += "_" + method.lowercased() }
            operationIDs.insert(id)
            operation["operationId"] = .string(id)
            var item = paths[path]?.objectValue ?? JSONObject()
            item[method.lowercased()] = .object(operation)
            paths[path] = .object(item)
        }
        for command in commands { add(command.method, command.path, operation(for: command)) }
        for route in routes { add(route.method, route.path, operation(for: route)) }

        let tags = Set(commands.map(tag(of:)) + routes.map(\.tag)).sorted()
        return [
            "openapi": "3.1.0",
            "info": [
                "title": "AgentRuntime HTTP API",
                "version": .string(AgentVersion.current),
                "description": """
                Every command of agent-control, over HTTP: one implementation of each command, reached from the \
                command line, this API and the dashboard. Answers are JSON: {"ok": true, …} or, with a 4xx or 5xx \
                status, {"ok": false, "error": …, "code": …, "pointer": …} (pointer: the JSON pointer of the field \
                at fault). GET and DELETE take their fields in the query, other methods as a JSON object body. \
                Routes that list `follow` stream server-sent events with ?follow=1 (resume with Last-Event-ID).
                """,
            ],
            "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
            "tags": .array(tags.map { ["name": .string($0)] }),
            "paths": .object(paths),
            // Every route needs one of these but those with `"security": []` (/livez, login).
            "security": [["bearer": []], ["session": []]],
            "components": [
                "schemas": [
                    "Error": CommandDescription.errorAnswer,
                    "Process": CommandCatalog.processSchema,
                ],
                "securitySchemes": [
                    "bearer": ["type": "http", "scheme": "bearer", "description": "A token of \"http\": {\"tokens\"}."],
                    "session": ["type": "apiKey", "in": "cookie", "name": "agent_session",
                                "description": "The session cookie POST /api/login sets; a change also needs X-CSRF-Token (the agent_csrf cookie's value)."],
                ],
            ],
        ]
    }

    /// The tag of a command: the route's first part after `/api` (`processes`, `chat`).
    static func tag(of command: CommandDescription) -> String {
        let parts = RouteTable.segments(command.path)
        return parts.count > 1 ? String(parts[1]) : command.name
    }

    static func operation(for command: CommandDescription) -> JSONObject {
        let properties = command.request["properties"]?.objectValue ?? [:]
        let required = Set(command.request["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        let inPath = command.pathParameters
        var parameters: [JSONValue] = inPath.map { name in
            parameter(name, in: "path", schema: properties[name] ?? ["type": "string"], required: true)
        }
        var operation: JSONObject = [
            "operationId": .string(command.name + (command.fixed["action"]?.stringValue.map { "_" + $0 } ?? "")),
            "summary": .string(command.summary),
            "tags": [.string(tag(of: command))],
            "x-command": .string(command.name),
            "x-mutating": .bool(command.mutating),
        ]
        var responses: JSONObject = ["200": .object(answer("The command's answer.", command.answer))]
        let takesQuery = command.method == "GET" || command.method == "DELETE"
        if takesQuery {
            for name in properties.keys where !inPath.contains(name) {
                parameters.append(parameter(name, in: "query", schema: properties[name]!, required: required.contains(name)))
            }
            if let stream = FollowStream.Shape(command) {
                parameters.append(parameter("follow", in: "query", schema: [
                    "type": "boolean", "default": false,
                    "description": .string("Stream as server-sent events (text/event-stream) instead: what is there now, then each new one of `\(stream.items)` as it comes, one JSON object per event, with `id:` lines; reconnect with Last-Event-ID to resume after the last one received."),
                ], required: false))
                var ok = answer("The command's answer, or with ?follow=1 a stream of server-sent events.", command.answer)
                var content = ok["content"]?.objectValue ?? [:]
                content["text/event-stream"] = ["schema": ["type": "string"]]
                ok["content"] = .object(content)
                responses["200"] = .object(ok)
            }
        } else {
            var body = command.request.objectValue ?? [:]
            var bodyProperties = properties
            for name in inPath { bodyProperties[name] = nil }
            body["properties"] = .object(bodyProperties)
            if case .array(let names)? = body["required"] {
                let left = names.filter { !inPath.contains($0.stringValue ?? "") }
                let remaining: JSONValue? = left.isEmpty ? JSONValue?.none : .array(left)
                body["required"] = remaining
            }
            if let binary = command.binaryBody {
                // The file as the body; the other members in the query (or all of them as JSON).
                for name in bodyProperties.keys.sorted() where name != binary.member {
                    parameters.append(parameter(name, in: "query", schema: bodyProperties[name]!, required: required.contains(name)))
                }
                var content: JSONObject = ["application/json": ["schema": .object(body)]]
                for type in binary.mediaTypes { content[type] = ["schema": ["type": "string", "format": "binary"]] }
                operation["requestBody"] = ["required": true, "content": .object(content)]
            } else if !bodyProperties.isEmpty {
                operation["requestBody"] = [
                    "required": .bool(body.contains(key: "required")),
                    "content": ["application/json": ["schema": .object(body)]],
                ]
            }
            responses["413"] = errorResponse("The body is larger than http.max_body_bytes.")
            responses["415"] = errorResponse("A body of another Content-Type than JSON (application/json, any application/…+json, or none; UTF-8) or an HTML form.")
        }
        if !parameters.isEmpty { operation["parameters"] = .array(parameters) }
        if command.name == ChatCommand.name {
            // With "stream" (or Accept: text/event-stream) the answer comes as server-sent events.
            var ok = answer("The command's answer, or with \"stream\": true server-sent events: `partial` events ({\"text\": PIECE}), then one `answer` event with this answer.", command.answer)
            var content = ok["content"]?.objectValue ?? [:]
            // Each server-sent event: its name and its data, a JSON object's text.
            content["text/event-stream"] = ["schema": ["type": "object", "required": ["event", "data"], "properties": [
                "event": ["enum": ["partial", "answer"]], "data": ["type": "string"],
            ]]]
            ok["content"] = .object(content)
            responses["200"] = .object(ok)
        }
        responses["400"] = errorResponse("The request is malformed or a field is invalid: `pointer` says which.")
        responses["401"] = errorResponse("No credentials, or wrong ones.")
        responses["403"] = errorResponse(command.mutating ? "The read role, or a session's request that failed the CSRF checks." : "A session's request that failed the CSRF checks.")
        responses["404"] = errorResponse("No such process, conversation or route.")
        responses["409"] = errorResponse("The command ran and was refused by the agent's state (a process already running, invalid settings for a reload).")
        if properties["if_match"] != nil {
            responses["412"] = errorResponse("`if_match` (or `If-Match`) is no longer the settings file's hash: read it again and redo the change.")
        }
        responses["503"] = errorResponse("The agent is stopping, or the store is off.")
        operation["responses"] = .object(responses)
        return operation
    }

    static func operation(for route: RouteDescription) -> JSONObject {
        var operation: JSONObject = [
            "operationId": .string(route.operationID),
            "summary": .string(route.summary),
            "tags": [.string(route.tag)],
        ]
        if route.isPublic { operation["security"] = [] }
        if let body = route.body {
            operation["requestBody"] = ["required": true, "content": ["application/json": ["schema": body]]]
        }
        var responses = JSONObject()
        for answer in route.answers {
            var content = JSONObject()
            for (type, schema) in answer.content { content[type] = ["schema": schema] }
            var response: JSONObject = ["description": .string(answer.description)]
            if !content.isEmpty { response["content"] = .object(content) }
            responses[answer.status] = .object(response)
        }
        // Every route that needs credentials answers 401 without them (the authenticators do,
        // before the route).
        if !route.isPublic, responses["401"] == nil { responses["401"] = errorResponse("No credentials, or wrong ones.") }
        operation["responses"] = .object(responses)
        return operation
    }

    static func parameter(_ name: String, in place: String, schema: JSONValue, required: Bool) -> JSONValue {
        var object: JSONObject = ["name": .string(name), "in": .string(place), "required": .bool(required), "schema": schema]
        if let description = schema["description"]?.stringValue { object["description"] = .string(description) }
        return .object(object)
    }

    static func answer(_ description: String, _ schema: JSONValue) -> JSONObject {
        ["description": .string(description), "content": ["application/json": ["schema": schema]]]
    }

    static func errorResponse(_ description: String) -> JSONValue {
        ["description": .string(description), "content": ["application/json": ["schema": ["$ref": "#/components/schemas/Error"]]]]
    }
}
