import AgentCommands
import Hummingbird
import HummingbirdAuth

/// Authenticates a browser by its session cookie (`agent_session`, set by `POST /api/login`).
/// An unknown or expired session is no identity (the access policy then answers 401), and so
/// is one whose user the settings no longer have, or have with another password (the session
/// ends); its role is the user's role now.
struct SessionAuthenticator: AuthenticatorMiddleware {
    typealias Context = AgentRequestContext
    let sessions: SessionTable
    let credentials: HTTPCredentials

    func authenticate(request: Request, context: Context) async throws -> APIIdentity? {
        guard context.identity == nil, let id = request.cookies[SessionTable.sessionCookie]?.value,
              let session = sessions.find(id) else { return nil }
        guard let user = credentials.user(session.user), user.passwordHash == session.passwordHash else {
            sessions.remove(id)
            return nil
        }
        return APIIdentity(name: session.user, role: APIIdentity.Role(rawValue: user.role) ?? .read, bySession: true)
    }
}
