import AgentBase
import AgentCommands
import Foundation
import Hummingbird
import JSONSchema
import Logging

/// `POST /api/login`, `POST /api/logout` and `GET /api/session`: browser sessions for the
/// users of `"http": {"users"}`.
///
/// Login takes `{"user": …, "password": …}` as JSON, or the same fields (and `next`, a local
/// path to go to) from an HTML form (`application/x-www-form-urlencoded`). It answers JSON
/// `{"ok": true, "user", "role", "csrf_token"}` (a form: 303 to `next`, or to
/// `/login?error=…` on failure) and sets two cookies: `agent_session` (the session id;
/// HttpOnly) and `agent_csrf` (the token the dashboard echoes in `X-CSRF-Token`).
struct LoginRoutes: Sendable {
    let credentials: HTTPCredentials
    let sessions: SessionTable
    let limiter: LoginRateLimiter
    let passwords: PasswordHashing
    let csrf: CSRFProtection
    let commands: CommandCenter
    let logger: Logger

    /// The largest login body read.
    static let maximumBodyBytes = 16_384

    func register(on router: Router<AgentRequestContext>) {
        router.post("/api/login") { request, context in
            do {
                return try await login(request, context: context)
            } catch let refusal as AccessRefusal {
                return refusal.response
            }
        }
        router.post("/api/logout") { request, context in
            logout(request, context: context)
        }
        // Who the request is authenticated as: the dashboard shows it and hides what the
        // read role may not do.
        router.get("/api/session") { _, context in
            guard let identity = context.identity else { throw AccessRefusal.unauthorized("not logged in") }
            return APIResponse.json(["ok": true, "user": .string(identity.name), "role": .string(identity.role.rawValue),
                                     "by": identity.bySession ? "session" : "token"])
        }
    }

    /// `127.0.0.1` of `127.0.0.1:5000`, `::1` of `[::1]:5000`: failures count per host.
    static func host(of address: String?) -> String {
        guard let address else { return "?" }
        if address.hasPrefix("["), let end = address.firstIndex(of: "]") { return String(address[address.index(after: address.startIndex)..<end]) }
        if let colon = address.lastIndex(of: ":") { return String(address[..<colon]) }
        return address
    }

    /// A user name as the log shows it: JSON-quoted (no control characters), at most 64.
    static func shown(_ user: String) -> String {
        JSONValue.string(String(user.prefix(64))).serialized()
    }

    func login(_ request: Request, context: AgentRequestContext) async throws -> Response {
        // A login from another site would log the browser in as the attacker (login CSRF).
        try csrf.checkOrigin(request)
        let content: APIRequestBody.Content
        switch await APIRequestBody.read(request, limit: Self.maximumBodyBytes) {
        case .success(let found): content = found
        case .failure(let refusal) where refusal.code == "too_large":
            return APIResponse.error(.contentTooLarge, code: "too_large", "a login body is at most \(Self.maximumBodyBytes) bytes")
        case .failure(let refusal): return refusal.response
        }
        let user: String, password: String, next: String?, form: Bool
        switch Self.credentials(in: content, formTyped: CSRFProtection.isForm(request)) {
        case .success(let found): (user, password, next, form) = found
        case .failure(let refusal): return refusal.response
        }
        let address = Self.host(of: context.remoteAddress)
        let caller = CommandCenter.Caller(front: "http", user: user, address: context.remoteAddress)
        if let wait = limiter.retryAfter(address: address, user: user) {
            logger.warning("http: login for user \(Self.shown(user)) from \(context.remoteAddress ?? "?") refused: too many failed logins (retry in \(wait) s)")
            return failure(form: form, next: next, reason: "rate_limited",
                           response: AccessRefusal(.tooManyRequests, code: "rate_limited", "too many failed logins from this address or for this user; try again in \(wait) s",
                                                   headers: [.retryAfter: String(wait)]).response)
        }
        let account = credentials.user(user)
        guard let matched = await passwords.verify(password, hash: account?.passwordHash ?? PasswordHashing.unknownUserHash) else {
            return AccessRefusal(.serviceUnavailable, code: "unavailable", "too many logins are being checked at once; try again in a second",
                                 headers: [.retryAfter: "1"]).response
        }
        guard matched, let account else {
            limiter.recordFailure(address: address, user: user)
            logger.warning("http: failed login for user \(Self.shown(user)) from \(context.remoteAddress ?? "?")")
            commands.recordAudit("login → refused: wrong user name or password", caller: caller)
            return failure(form: form, next: next, reason: "wrong",
                           response: APIResponse.error(.unauthorized, code: "unauthorized", "wrong user name or password"))
        }
        limiter.recordSuccess(user: user, address: address)
        let role = APIIdentity.Role(rawValue: account.role) ?? .read
        let (id, token) = sessions.create(user: user, role: role, passwordHash: account.passwordHash)
        logger.info("http: user \(Self.shown(user)) logged in from \(context.remoteAddress ?? "?")")
        commands.recordAudit("login → ok", caller: caller)
        var response = form
            ? Response(status: .seeOther, headers: [.location: Self.localPath(next) ?? "/", .cacheControl: "no-store"])
            : APIResponse.json(["ok": true, "user": .string(user), "role": .string(role.rawValue), "csrf_token": .string(token)])
        response.setCookie(Cookie(name: SessionTable.sessionCookie, value: id, path: "/", secure: csrf.secure, httpOnly: true, sameSite: .strict))
        response.setCookie(Cookie(name: SessionTable.csrfCookie, value: token, path: "/", secure: csrf.secure, httpOnly: false, sameSite: .strict))
        return response
    }

    /// The user, password and `next` of a login body, and whether it came from an HTML form
    /// (answered with redirects, even an empty one); a JSON body without them is refused.
    static func credentials(in content: APIRequestBody.Content, formTyped: Bool)
        -> Result<(user: String, password: String, next: String?, form: Bool), APIRequestBody.Refusal> {
        switch content {
        case .form(let fields):
            func value(_ name: String) -> String? { fields.first { $0.name == name }?.value }
            return .success((value("user") ?? "", value("password") ?? "", value("next"), true))
        case .empty where formTyped:
            return .success(("", "", nil, true))
        case .empty, .json:
            var value = JSONValue.object([:])
            if case .json(let parsed) = content { value = parsed }
            guard let user = value["user"]?.stringValue else {
                return .failure(.init(status: .badRequest, code: "invalid", message: "expected \"user\" (a string); found \(Describe.value(value["user"] ?? .null))", pointer: "/user"))
            }
            guard let password = value["password"]?.stringValue else {
                return .failure(.init(status: .badRequest, code: "invalid", message: "expected \"password\" (a string)", pointer: "/password"))
            }
            return .success((user, password, nil, false))
        }
    }

    /// A refused login: JSON for a script, a redirect back to the form for a browser.
    func failure(form: Bool, next: String?, reason: String, response: Response) -> Response {
        guard form else { return response }
        var target = "/login?error=" + reason
        if let next = Self.localPath(next), let encoded = next.addingPercentEncoding(withAllowedCharacters: .alphanumerics) { target += "&next=" + encoded }
        var headers: HTTPFields = [.location: target, .cacheControl: "no-store"]
        if let wait = response.headers[.retryAfter] { headers[.retryAfter] = wait }
        return Response(status: .seeOther, headers: headers)
    }

    /// `next` when it is a path on this server (`/x`, not `//evil.example` nor a URL).
    static func localPath(_ next: String?) -> String? {
        // Bytes, not graphemes: `//` followed by a combining mark does not have the prefix
        // `//` as `Character`s, but a browser reads it as another host.
        guard let next, next.utf8.first == UInt8(ascii: "/"), !next.utf8.starts(with: "//".utf8), !next.contains("\\"),
              !next.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 }) else { return nil }
        return next
    }

    func logout(_ request: Request, context: AgentRequestContext) -> Response {
        let id = request.cookies[SessionTable.sessionCookie]?.value
        guard let identity = context.identity, identity.bySession, let id else {
            return APIResponse.error(.badRequest, code: "invalid", "logout ends a browser session; this request has none (a bearer token needs no logout)")
        }
        sessions.remove(id)
        commands.recordAudit("logout → ok", caller: CommandCenter.Caller(front: "http", user: identity.name, address: context.remoteAddress))
        var response = CSRFProtection.isForm(request)
            ? Response(status: .seeOther, headers: [.location: "/login", .cacheControl: "no-store"])
            : APIResponse.json(["ok": true])
        response.setCookie(Cookie(name: SessionTable.sessionCookie, value: "", maxAge: 0, path: "/", secure: csrf.secure, httpOnly: true, sameSite: .strict))
        response.setCookie(Cookie(name: SessionTable.csrfCookie, value: "", maxAge: 0, path: "/", secure: csrf.secure, httpOnly: false, sameSite: .strict))
        return response
    }
}
