import Hummingbird
import JSONSchema

/// `GET /api/openapi.json`: the OpenAPI document, made once when the front starts.
struct OpenAPIRoutes: Sendable {
    let document: JSONValue

    static let documentation: [RouteDescription] = [
        RouteDescription("GET", "/api/openapi.json", operationID: "openapi", summary: "This document: the OpenAPI 3.1 description of the API.", tag: "meta",
                         answers: [.json("200", "The OpenAPI document.", ["type": "object", "required": ["openapi", "paths"]])]),
    ]

    func register(on router: Router<AgentRequestContext>) {
        let document = document
        router.get("/api/openapi.json") { _, _ in APIResponse.json(document) }
    }
}
