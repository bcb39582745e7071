import Hummingbird

/// Requests whose shape no route takes, refused before any handler: a known path with another
/// method (405 with `Allow`: Hummingbird alone answers 404) and a GET or DELETE with a body
/// (400: its fields belong in the query; a DELETE's `if_match` in a body would go unseen).
struct RequestShapeMiddleware: RouterMiddleware {
    typealias Context = AgentRequestContext

    /// The paths and methods served.
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let allowed = routes.methods(for: request.uri.path), !allowed.contains(request.method.rawValue) {
            let allow = allowed.joined(separator: ", ")
            return APIResponse.error(.methodNotAllowed, code: "invalid", "\(request.uri.path) takes \(allow), not \(request.method)",
                                     headers: [.allow: allow])
        }
        if [.get, .head, .delete].contains(request.method), Self.hasBody(request) {
            return APIResponse.error(.badRequest, code: "invalid", "a \(request.method) request takes no body; send the fields in the query (?name=value)")
        }
        return try await next(request, context)
    }

    /// Whether the request says a body follows (a length above 0, or chunks).
    static func hasBody(_ request: Request) -> Bool {
        if let length = request.headers[.contentLength] { return length != "0" }
        return request.headers[.transferEncoding] != nil
    }
}
