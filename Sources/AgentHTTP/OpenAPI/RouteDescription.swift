import JSONSchema

/// A route that is not a command of ``CommandCatalog`` (health, metrics, the OpenAPI document
/// itself, login): declared next to the code that serves it, so that the OpenAPI document
/// describes it and a wrong method on its path gets 405 with `Allow`.
struct RouteDescription: Sendable {
    /// One answer the route can give.
    struct Answer: Sendable {
        var status: String
        var description: String
        /// By content type (`application/json`), the schema of the body.
        var content: [(type: String, schema: JSONValue)]

        init(_ status: String, _ description: String, content: [(type: String, schema: JSONValue)]) {
            self.status = status
            self.description = description
            self.content = content
        }

        /// A JSON answer.
        static func json(_ status: String, _ description: String, _ schema: JSONValue) -> Answer {
            Answer(status, description, content: [("application/json", schema)])
        }

        /// The error answer (``CommandDescription/errorAnswer``).
        static func error(_ status: String, _ description: String) -> Answer {
            Answer(status, description, content: [("application/json", ["$ref": "#/components/schemas/Error"])])
        }
    }

    var method: String
    var path: String
    var operationID: String
    var summary: String
    var tag: String
    /// Answers without credentials (`/livez`).
    var isPublic: Bool
    /// The JSON body's schema, when the route takes one.
    var body: JSONValue?
    var answers: [Answer]

    init(_ method: String, _ path: String, operationID: String, summary: String, tag: String, isPublic: Bool = false,
         body: JSONValue? = nil, answers: [Answer]) {
        self.method = method
        self.path = path
        self.operationID = operationID
        self.summary = summary
        self.tag = tag
        self.isPublic = isPublic
        self.body = body
        self.answers = answers
    }
}
