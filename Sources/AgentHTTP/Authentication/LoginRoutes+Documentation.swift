import AgentCommands
import JSONSchema

extension LoginRoutes {
    /// `POST /api/login` and `POST /api/logout` in the OpenAPI document (their JSON forms; an
    /// HTML form gets 303 redirects instead).
    static let documentation: [RouteDescription] = [
        RouteDescription("POST", "/api/login", operationID: "login", summary: "Logs a user in: sets the session cookie (agent_session) and the CSRF cookie (agent_csrf).",
                         tag: "sessions", isPublic: true,
                         body: CommandDescription.object(["user": ["type": "string"], "password": ["type": "string"]], required: ["user", "password"], open: true),
                         answers: [.json("200", "Logged in.", CommandDescription.object([
                                       "ok": ["const": true], "user": ["type": "string"], "role": ["type": "string", "enum": ["read", "admin"]], "csrf_token": ["type": "string"],
                                   ], required: ["ok", "user", "role", "csrf_token"])),
                                   RouteDescription.Answer("303", "A login from an HTML form (application/x-www-form-urlencoded): to its local `next` page, or back to the login page after a failure.", content: []),
                                   .error("400", "The body is not JSON or lacks user or password."),
                                   .error("401", "Wrong user name or password."),
                                   .error("403", "The request came from another origin."),
                                   .error("413", "The body is larger than 16384 bytes."),
                                   .error("415", "A body of another Content-Type than JSON or an HTML form."),
                                   .error("429", "Too many failed logins from this address or for this user."),
                                   .error("503", "Too many logins are being checked at once.")]),
        RouteDescription("POST", "/api/logout", operationID: "logout", summary: "Ends the browser session of the request's cookie.", tag: "sessions",
                         answers: [.json("200", "Logged out.", CommandDescription.okAnswer),
                                   .error("400", "The request has no session (a bearer token needs no logout)."),
                                   .error("401", "No credentials."),
                                   .error("403", "A failed CSRF check.")]),
        RouteDescription("GET", "/api/session", operationID: "session", summary: "Who the request is authenticated as (the dashboard shows it).", tag: "sessions",
                         answers: [.json("200", "The identity.", CommandDescription.object([
                                       "ok": ["const": true], "user": ["type": "string"], "role": ["type": "string", "enum": ["read", "admin"]],
                                       "by": ["type": "string", "enum": ["session", "token"]],
                                   ], required: ["ok", "user", "role", "by"])),
                                   .error("401", "No credentials, or wrong ones.")]),
    ]
}
