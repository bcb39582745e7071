import Hummingbird

/// Counts every request by route template, method and status in `agent_http_requests_total`.
/// Added first, so that it sees the status of what the other middleware answered (errors,
/// refusals) too.
struct HTTPMetricsMiddleware: RouterMiddleware {
    typealias Context = AgentRequestContext
    let exporter: PrometheusExporter

    /// The label of requests that matched no route (their paths are the clients' choice).
    static let unmatched = "unmatched"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            let response = try await next(request, context)
            exporter.countRequest(route: Self.route(of: context), method: request.method.rawValue, status: response.status.code)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            exporter.countRequest(route: Self.route(of: context), method: request.method.rawValue, status: status)
            throw error
        }
    }

    /// The route the router matched (Hummingbird writes it as `/api/processes/{name}/stop`).
    static func route(of context: Context) -> String {
        guard let path = context.endpointPath, path != "NotFound" else { return unmatched }
        return path
    }
}
