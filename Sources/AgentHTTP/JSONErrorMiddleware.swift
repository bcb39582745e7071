import Hummingbird

/// Every error as a JSON answer: unknown routes, bodies too large, refusals of the access
/// policy, anything a handler threw (a known route with another method is answered by
/// ``RequestShapeMiddleware``). Nothing leaves the server as an HTML page or an empty 500.
struct JSONErrorMiddleware: RouterMiddleware {
    typealias Context = AgentRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let refusal as AccessRefusal {
            return refusal.response
        } catch let error as any HTTPResponseError {
            let status = error.status
            let code = switch status {
            case .notFound: "not_found"
            case .contentTooLarge: "too_large"
            case .unauthorized: "unauthorized"
            case .forbidden: "forbidden"
            case .tooManyRequests: "rate_limited"
            default: status.code < 500 ? "invalid" : "failed"
            }
            let message = status == .notFound ? "no route \(request.method) \(request.uri.path); the API is described at GET /api/openapi.json" : "\(status.code) \(status.reasonPhrase)"
            return APIResponse.error(status, code: code, message)
        } catch {
            context.logger.error("http: \(request.method) \(request.uri.path) failed: \(error)")
            return APIResponse.error(.internalServerError, code: "failed", "the request failed: \(error)")
        }
    }
}
