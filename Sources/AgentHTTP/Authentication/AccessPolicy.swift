import AgentCommands
import Foundation
import Hummingbird

/// Who may do what, after the authenticators ran: nothing but the public routes answers
/// without an identity (401, or a redirect to the login page for a browser asking for a
/// page); the `read` role may only read; a session's changes pass the CSRF checks.
struct AccessPolicy: RouterMiddleware {
    typealias Context = AgentRequestContext
    let csrf: CSRFProtection
    /// Where refused changes are audited.
    let commands: CommandCenter

    /// Routes that answer without credentials: liveness, and what the login form needs.
    static let publicRoutes: Set<String> = ["GET /livez", "HEAD /livez", "POST /api/login", "GET /login", "HEAD /login"]
    /// The paths of ``publicRoutes`` (most requests are on none of them: no key to make).
    static let publicPaths = Set(publicRoutes.map { String($0.split(separator: " ").last ?? "") })
    /// Static files of the dashboard (the login page's styles and scripts).
    static let publicPrefix = "/assets/"

    static func isPublic(_ request: Request) -> Bool {
        let method = request.method
        let path = request.uri.path
        if publicPaths.contains(path), publicRoutes.contains("\(method) \(path)") { return true }
        return (method == .get || method == .head) && path.hasPrefix(publicPrefix)
    }

    /// Whether the request needs the admin role (see ``CommandCatalog/needsAdmin(method:target:)``):
    /// decided on the command the router will run, however its path is spelled.
    static func changesSomething(_ request: Request) -> Bool {
        CommandCatalog.needsAdmin(method: request.method.rawValue, target: Substring(request.uri.path))
    }

    /// Whether the request is a person's action on a run assigned to them (`task complete`,
    /// `task fail`, a workflow's approval, and the dashboard's forms for them): any role may
    /// send it — the command layer checks that the run waits for that very user, or that the
    /// user is one of the approval's approvers; a chat user's own history and preferences —,
    /// a session's with its CSRF token.
    static func isPersonAction(_ request: Request) -> Bool {
        guard request.method == .post || request.method == .put || request.method == .delete else { return false }
        let parts = RoutePath.segments(RoutePath.path(ofTarget: Substring(request.uri.path)))
        if request.method == .post, personForms.contains(where: { RoutePath.matches($0, parts) }) { return true }
        guard let command = CommandCatalog.command(method: request.method.rawValue, target: Substring(request.uri.path)) else { return false }
        return command.mutating && !command.requiresAdmin
    }

    /// The dashboard's forms for a person's action (a chat message and their own chat
    /// preferences: any role may chat, as over the API; what a message may make happen is
    /// checked where it happens).
    static let personForms = ["/executors/runs/{id}", "/workflow-runs/{id}/steps/{step}", "/chat", "/chat/preferences"].map { RoutePath.segments(Substring($0)) }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if Self.isPublic(request) { return try await next(request, context) }
        guard let identity = context.identity else {
            if Self.wantsPage(request) {
                let target = "/login?next=" + (request.uri.path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "/")
                return Response(status: .seeOther, headers: [.location: target, .cacheControl: "no-store"])
            }
            if DashboardRoutes.isAction(request) {
                return DashboardRoutes.refused("You are not logged in (or the session has ended): log in again, then repeat the action.",
                                               request: request, identity: nil, status: .unauthorized)
            }
            throw AccessRefusal.credentialsRequired
        }
        // MCP decides per tool, on the resolved command, with the caller's role (MCPRoutes).
        if request.uri.path == MCPRoutes.path, request.method == .post { return try await next(request, context) }
        let personAction = Self.isPersonAction(request)
        guard personAction || Self.changesSomething(request) else { return try await next(request, context) }
        let checked: Request
        do {
            let grant = identity.role == .admin ? nil : CommandCatalog.command(method: request.method.rawValue, target: Substring(request.uri.path))?.grant
            guard identity.mayRun(needingAdminOr: grant) || personAction else {
                // `settings_get` and `validate` change nothing: say why they are not for the read role.
                let reason = CommandCatalog.command(method: request.method.rawValue, target: Substring(request.uri.path))?.adminReason ?? "it changes something"
                let granted = grant.map { " (or a token granted \"\($0)\": \"grants\": [\"\($0)\"] in /http/tokens)" } ?? ""
                throw AccessRefusal.forbidden("\(identity.name) has the read role: \(request.method) \(request.uri.path) needs the admin role\(granted), as \(reason)")
            }
            checked = identity.bySession ? try await csrf.check(request, context: context) : request
        } catch let refusal as AccessRefusal {
            // A change refused before the command layer is audited too: who tried what.
            commands.recordAudit("\(request.method) \(request.uri.path) → refused (\(refusal.status.code)): \(refusal.message)",
                                 caller: CommandCenter.Caller(front: "http", user: identity.name, address: context.remoteAddress))
            // A browser's form gets a page it can go back from, not JSON.
            if DashboardRoutes.isAction(request) { return DashboardRoutes.refused(refusal.message, request: request, identity: identity, status: refusal.status) }
            throw refusal
        }
        return try await next(checked, context)
    }

    /// Why `identity` may not run `command`, if it may not: the check made on the command the
    /// router resolved (and on the commands a dashboard page runs), so that no spelling of a
    /// path (`/api/settings/`, `//api/settings`, an absolute-form request line) reaches an
    /// admin command with the read role, whatever the middleware's look-up of the raw path saw.
    static func roleRefusal(_ command: CommandDescription, _ identity: APIIdentity?) -> AccessRefusal? {
        guard command.requiresAdmin else { return nil }
        guard let identity else {
            return .credentialsRequired
        }
        guard !identity.mayRun(needingAdminOr: command.grant) else { return nil }
        let granted = command.grant.map { " (or a token granted \"\($0)\": \"grants\": [\"\($0)\"] in /http/tokens)" } ?? ""
        return .forbidden("\(identity.name) has the read role: \(command.name) (\(command.method) \(command.path)) needs the admin role\(granted), as \(command.adminReason)")
    }

    /// A browser navigating to a dashboard page (not the API): sent to the login form.
    static func wantsPage(_ request: Request) -> Bool {
        let path = request.uri.path
        guard request.method == .get, !path.hasPrefix("/api/"), path != "/metrics", path != "/readyz" else { return false }
        return request.headers[.accept]?.contains("text/html") ?? false
    }
}
