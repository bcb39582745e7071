import AgentCommands
import Hummingbird
import HummingbirdAuth

/// Authenticates `Authorization: Bearer TOKEN` against the tokens in force (`"http":
/// {"tokens": …}`, as the last reload left them), comparing with every token in constant time. A request with an
/// `Authorization` header that is not a known bearer token is refused at once (401), even if
/// it also has a session cookie: a client that sends credentials means those.
struct BearerTokens: AuthenticatorMiddleware {
    typealias Context = AgentRequestContext
    let credentials: HTTPCredentials

    func authenticate(request: Request, context: Context) async throws -> APIIdentity? {
        guard request.headers[.authorization] != nil else { return nil }
        guard let bearer = Self.token(in: request) else {
            throw AccessRefusal.unauthorized("the Authorization header must be \"Bearer TOKEN\" (a token of \"http\": {\"tokens\"}); other schemes are not accepted", invalidToken: true)
        }
        let tokens = credentials.tokens
        var found: APIToken?
        // No early exit: the time does not say which token (nor how much of one) matched.
        for token in tokens where ConstantTime.equals(bearer, token.value) { found = token }
        guard let found else {
            throw AccessRefusal.unauthorized("the bearer token is not one of \"http\": {\"tokens\"}", invalidToken: true)
        }
        return APIIdentity(name: found.name, role: APIIdentity.Role(rawValue: found.role) ?? .read, bySession: false,
                           grants: Set(found.grants))
    }

    /// The token of an `Authorization: Bearer TOKEN` header: the scheme in any case (RFC 9110
    /// §11.1), spaces around the token ignored; nil for another scheme or no token.
    static func token(in request: Request) -> String? {
        guard let header = request.headers[.authorization] else { return nil }
        let parts = header.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1])
    }
}
