import AgentCommands
import Hummingbird
import JSONSchema

/// Whether the credentials a long-lived answer (a `?follow` stream) was opened with still hold:
/// its token is still one of the tokens in force, its session still lives for a user the
/// settings still have with the same password. A reload that revoked the token (or removed the
/// user) ended new requests at once, while an open stream went on sending events.
struct StreamAuthorization: Sendable {
    private let check: @Sendable () -> Bool

    /// The check for `request`, authenticated as `identity`.
    init(_ request: Request, identity: APIIdentity?, credentials: HTTPCredentials, sessions: SessionTable) {
        guard let identity else {
            check = { true }
            return
        }
        if identity.bySession, let id = request.cookies[SessionTable.sessionCookie]?.value {
            check = {
                guard let session = sessions.find(id), let user = credentials.user(session.user) else { return false }
                return user.passwordHash == session.passwordHash
            }
        } else if let token = BearerTokens.token(in: request) {
            check = {
                var found = false
                // No early exit, as at the request: the time does not say which token matched.
                for candidate in credentials.tokens where ConstantTime.equals(token, candidate.value) { found = true }
                return found
            }
        } else {
            check = { false }
        }
    }

    /// True while the stream may go on.
    var holds: Bool { check() }

    /// What the stream sends last when they no longer hold.
    static let revoked: JSONValue = [
        "ok": false, "code": "unauthorized",
        "error": "the credentials this stream was opened with are no longer in force (a reload revoked the token, or removed the user or changed their password)",
    ]
}
