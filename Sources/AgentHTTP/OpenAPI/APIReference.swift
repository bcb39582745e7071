import AgentBase
import AgentCommands
import JSONSchema

/// `docs/reference/openapi.json` and `docs/reference/http-api.md`: the OpenAPI document an
/// agent serves at `/api/openapi.json` (made from the command registry's declarations and the
/// other routes' descriptions), and every operation of it in Markdown.
public enum APIReference {
    /// The document, as `GET /api/openapi.json` answers it.
    public static var document: JSONValue {
        OpenAPIDocument.make(commands: CommandRegistry.standard.declarations, routes: HTTPFront.documentedRoutes)
    }

    /// The document as the checked-in file holds it: indented, keys sorted.
    public static func openAPIJSON() -> String {
        document.serialized(pretty: true, sortedKeys: true) + "\n"
    }

    /// Every operation by tag: its summary, the command behind it, its parameters, body,
    /// answer and error statuses — of `document` (the dashboard's `/docs/api` passes the one
    /// the agent serves).
    public static func markdown(of document: JSONValue = document) -> String {
        var text = Markdown.header("HTTP API reference", from: "the command registry (the OpenAPI document of docs/reference/openapi.json)")
        text += "\n" + (document["info"]?["description"]?.stringValue ?? "") + "\n\n"
        text += "Credentials: a bearer token of `http.tokens`, or the session cookie `POST /api/login` sets. The same document is served by a running agent at `/api/openapi.json`.\n"
        var byTag: [String: [(path: String, method: String, operation: JSONValue)]] = [:]
        for (path, item) in document["paths"]?.objectValue ?? [:] {
            for (method, operation) in item.objectValue ?? [:] {
                let tag = operation["tags"]?[0]?.stringValue ?? "other"
                byTag[tag, default: []].append((path, method, operation))
            }
        }
        for tag in byTag.keys.sorted() {
            text += "\n## \(tag)\n"
            for entry in byTag[tag]!.sorted(by: { ($0.path, $0.method) < ($1.path, $1.method) }) {
                text += operation(entry.method.uppercased(), entry.path, entry.operation)
            }
        }
        return text
    }

    private static func operation(_ method: String, _ path: String, _ operation: JSONValue) -> String {
        var text = "\n### `\(method) \(path)`\n\n" + (operation["summary"]?.stringValue ?? "") + "\n\n"
        var facts: [String] = []
        if let command = operation["x-command"]?.stringValue { facts.append("Command `\(command)`") }
        if let mutating = operation["x-mutating"]?.boolValue { facts.append(mutating ? "changes the agent (admin role)" : "reads only (read role)") }
        if operation["security"]?.arrayValue?.isEmpty == true { facts.append("no credentials needed") }
        if !facts.isEmpty { text += facts.joined(separator: " · ") + ".\n\n" }
        let parameters = operation["parameters"]?.arrayValue ?? []
        if !parameters.isEmpty {
            text += Markdown.table(["Parameter", "In", "Type", "Required", "Description"], parameters.map { parameter in
                let schema = parameter["schema"] ?? [:]
                return [Markdown.code(parameter["name"]?.stringValue ?? ""), parameter["in"]?.stringValue ?? "",
                        Markdown.cell(typeAndBounds(schema)), parameter["required"]?.boolValue == true ? "yes" : "",
                        Markdown.cell(parameter["description"]?.stringValue ?? schema["description"]?.stringValue ?? "")]
            }) + "\n"
        }
        if let body = operation["requestBody"]?["content"]?["application/json"]?["schema"] {
            text += "Body (JSON):\n\n" + members(body) + "\n"
        }
        let responses = operation["responses"]?.objectValue ?? [:]
        if let ok = responses["200"]?["content"]?["application/json"]?["schema"], !(ok["properties"]?.objectValue ?? [:]).isEmpty {
            text += "Answer (200):\n\n" + members(ok) + "\n"
        }
        let statuses = responses.keys.sorted().map { "\($0): " + (responses[$0]?["description"]?.stringValue ?? "") }
        text += statuses.map { "- " + $0 }.joined(separator: "\n") + "\n"
        return text
    }

    /// The members of an object schema: name, type, whether required, description.
    private static func members(_ schema: JSONValue) -> String {
        let required = Set(schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        let properties = (schema["properties"]?.objectValue ?? [:]).sorted { $0.key < $1.key }
        return Markdown.table(["Member", "Type", "Required", "Description"], properties.map { name, member in
            [Markdown.code(name), Markdown.cell(typeAndBounds(member)), required.contains(name) ? "yes" : "",
             Markdown.cell(member["description"]?.stringValue ?? "")]
        })
    }

    private static func typeAndBounds(_ schema: JSONValue) -> String {
        let type = schema["$ref"]?.stringValue.map { String($0.split(separator: "/").last ?? "") } ?? SchemaKey.typeText(schema)
        let bounds = SchemaKey.bounds(schema)
        return bounds.isEmpty ? type : type + " (" + bounds.joined(separator: ", ") + ")"
    }
}
