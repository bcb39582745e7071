import Hummingbird
import HummingbirdAuth

/// Authenticates a browser by its session cookie (`agent_session`, set by `POST /api/login`).
/// An unknown or expired session is no identity (the access policy then answers 401).
struct SessionAuthenticator: AuthenticatorMiddleware {
    typealias Context = AgentRequestContext
    let sessions: SessionTable

    func authenticate(request: Request, context: Context) async throws -> APIIdentity? {
        guard context.identity == nil, let id = request.cookies[SessionTable.sessionCookie]?.value,
              let session = sessions.find(id) else { return nil }
        return APIIdentity(name: session.user, role: session.role, bySession: true)
    }
}
