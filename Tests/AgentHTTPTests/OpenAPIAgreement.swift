@testable import AgentCommands
@testable import AgentHTTP
import AgentTestSupport
import Foundation
import JSONSchema
import Synchronization
import Testing

/// Every answer the tests receive from an agent's HTTP front is checked against the OpenAPI
/// document of its route (the document the server serves, made here from the same
/// declarations): its status must be documented for the operation, and a JSON body must pass
/// the documented schema. The HTTP clients of the tests (``RawHTTP``, ``HTTPProbe``, ``curl``)
/// call ``check(method:target:status:contentType:body:)`` for every answer (through
/// ``HTTPAnswerCheck``, which finds this type at run time), so each HTTP test is an agreement
/// test too; a disagreement is an issue of the test that received it.
enum OpenAPIAgreement: HTTPAnswerChecking {
    static let document = OpenAPIDocument.make(commands: CommandCatalog.all, routes: HTTPFront.documentedRoutes)

    private static let templates: [(segments: [Substring], path: String)] =
        (document["paths"]?.objectValue?.keys ?? []).map { (RouteTable.segments($0), $0) }

    /// Validators by schema text, compiled once.
    private static let validators = Mutex<[String: JSONSchemaValidator]>([:])

    /// What disagrees with the document in one answer (empty: it agrees, or the route is not
    /// the API's: a dashboard page, another server).
    static func problems(method: String, target: String, status: Int, contentType: String?, body: String) -> [String] {
        let path = String(target.prefix { $0 != "?" && $0 != "#" })
        let parts = RouteTable.segments(path)
        // The most literal template first: /api/tasks/{name}/run before /api/{x}/{y}/run.
        let matching = templates.filter { RouteTable.matches($0.segments, parts) }
            .sorted { $0.segments.filter { $0.hasPrefix("{") }.count < $1.segments.filter { $0.hasPrefix("{") }.count }
        let verb = method == "HEAD" ? "get" : method.lowercased()
        guard let template = matching.first(where: { document["paths"]?[$0.path]?[verb] != nil }),
              let operation = document["paths"]?[template.path]?[verb] else { return [] }
        let answer = "\(method) \(path) → \(status)"
        guard let response = operation["responses"]?[String(status)] ?? operation["responses"]?["default"] else {
            // 404, 405, 413 and 429 of routes that do not list them: answered by the front for
            // any route (a path parameter naming nothing, a method, a body, the login limiter).
            if [404, 405, 413, 429].contains(status) { return [] }
            return ["\(answer): the status is not documented for \(operation["operationId"]?.stringValue ?? template.path)"]
        }
        guard method != "HEAD", let type = contentType?.split(separator: ";").first.map({ $0.trimmingCharacters(in: .whitespaces) }),
              type == "application/json" else { return [] }
        guard let schema = response["content"]?["application/json"]?["schema"] else {
            return ["\(answer): a JSON body where the document declares none"]
        }
        let value: JSONValue
        do {
            value = try JSONValue.parse(body)
        } catch {
            return ["\(answer): the body is not JSON: \(error)"]
        }
        return validator(for: schema).validate(value).prefix(5).map {
            "\(answer): \($0.instanceLocation.isEmpty ? "(the answer)" : $0.instanceLocation): \($0.message) (schema \($0.keywordLocation))"
        }
    }

    /// Records an issue for each disagreement of one answer.
    static func check(method: String, target: String, status: Int, contentType: String?, body: String) {
        for problem in problems(method: method, target: target, status: status, contentType: contentType, body: body) {
            Issue.record("the answer disagrees with the OpenAPI document: \(problem)\n\(body.prefix(2000))")
        }
    }

    /// `schema` with the document's components beside it, so that its `$ref`s resolve.
    private static func validator(for schema: JSONValue) -> JSONSchemaValidator {
        let key = schema.serialized()
        if let found = validators.withLock({ $0[key] }) { return found }
        let whole: JSONValue = ["allOf": [schema], "components": document["components"] ?? [:]]
        let compiled: JSONSchemaValidator
        do {
            compiled = try JSONSchemaValidator(schema: whole)
        } catch {
            fatalError("an answer schema of the OpenAPI document does not compile: \(error)")
        }
        validators.withLock { $0[key] = compiled }
        return compiled
    }
}
