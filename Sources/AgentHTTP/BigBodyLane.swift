import AgentBase
import HTTPTypes
import Hummingbird

/// Where a request with a big body is handled: a thread of its own (`agent-http-body`), not the
/// HTTP front's one event loop thread. Parsing and checking a body of a MiB of small elements
/// (100,000 keys) takes 50 ms of CPU, answered or refused: on the event loop, a client with
/// any token held every other request — `/livez` on the health listener too — for that long
/// per body, 1.8 s with 40 such clients. Here they wait for each other and nothing else does.
/// The router's first middleware, so that everything after it runs there for such a request:
/// the CSRF check that reads a dashboard form, the route's parse and check. A body of up to
/// ``threshold`` bytes (every request a dashboard or the CLI sends but a big input) stays on
/// the event loop: no hop.
struct BigBodyLane: RouterMiddleware {
    typealias Context = AgentRequestContext

    /// Bodies longer than this (bytes), or of a length not announced (chunked), take the lane.
    static let threshold = 64 * 1024

    /// Whether `request`'s body takes the lane.
    static func wanted(_ request: Request) -> Bool {
        guard let length = request.headers[.contentLength] else { return request.headers[.transferEncoding] != nil }
        return Int(length).map { $0 > threshold } ?? true
    }

    /// The lane's executor, started at the first big body.
    static let executor = ThreadTaskExecutor(name: "agent-http-body")

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard Self.wanted(request) else { return try await next(request, context) }
        return try await withTaskExecutorPreference(Self.executor) { try await next(request, context) }
    }
}
