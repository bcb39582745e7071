import AgentCommands
import Foundation
import Hummingbird
import JSONSchema
import Mustache

/// The dashboard at `/`: pages rendered on the server from the answers of the same commands
/// the API executes (through ``CommandCenter``, never from supervision state), forms that post
/// those commands, one style sheet and a small script that refreshes pages by polling the API.
///
/// Who may see and change what is the access policy's business (``AccessPolicy``: a page
/// without a session goes to `/login`; a form that changes something needs the admin role
/// and passes the CSRF checks: `Origin`, `Sec-Fetch-Site`, and the session's token, which
/// every form carries in its hidden `csrf` field).
struct DashboardRoutes: Sendable {
    let commands: CommandCenter
    let maximumBodyBytes: Int

    func register(on router: Router<AgentRequestContext>) {
        // Under the access policy's public prefix: the login page uses them too.
        router.get("/assets/dashboard.css") { _, _ in Self.asset(DashboardAssets.css, type: "text/css; charset=utf-8") }
        router.get("/assets/dashboard.js") { _, _ in Self.asset(DashboardAssets.javascript, type: "text/javascript; charset=utf-8") }
        router.get("/login") { request, context in loginPage(request, context) }
        router.get("/") { request, context in await processesPage(request, context) }
        router.get("/processes/{name}") { request, context in await processPage(request, context) }
        router.post("/processes/{name}") { request, context in await processAction(request, context) }
        router.get("/events") { request, context in await eventsPage(request, context) }
        router.get("/modules") { request, context in await modulesPage(request, context) }
        router.post("/modules") { request, context in await moduleAction(request, context) }
        router.get("/settings") { request, context in await settingsPage(request, context) }
        router.post("/settings") { request, context in await settingsSubmit(request, context) }
        router.get("/tasks") { request, context in await tasksPage(request, context) }
        router.post("/tasks/{name}/run") { request, context in await taskRunAction(request, context) }
        router.get("/runs/{id}") { request, context in await runPage(request, context) }
        router.post("/runs/{id}") { request, context in await runAction(request, context) }
        router.get("/schedules") { request, context in await schedulesPage(request, context) }
        router.post("/schedules/{name}") { request, context in await scheduleAction(request, context) }
        router.get("/workflows") { request, context in await workflowsPage(request, context) }
        router.post("/workflows/{name}/run") { request, context in await workflowStartAction(request, context) }
        router.get("/workflow-runs/{id}") { request, context in await workflowRunPage(request, context) }
        router.post("/workflow-runs/{id}") { request, context in await workflowRunAction(request, context) }
        router.post("/workflow-runs/{id}/steps/{step}") { request, context in await workflowDecisionAction(request, context) }
        router.get("/memory") { request, context in await memoryPage(request, context) }
        router.post("/memory") { request, context in await memoryAction(request, context) }
        router.get("/executors") { request, context in await executorsPage(request, context) }
        router.post("/executors/runs/{id}") { request, context in await personRunAction(request, context) }
        router.post("/executors/{name}") { request, context in await executorAction(request, context) }
        router.get("/fleet") { request, context in await fleetPage(request, context) }
        router.get("/chat") { request, context in await chatPage(request, context) }
        router.post("/chat") { request, context in await chatSend(request, context) }
        router.post("/chat/clear") { request, context in await chatClear(request, context) }
        router.get("/chat/preferences") { request, context in await chatPreferencesPage(request, context) }
        router.post("/chat/preferences") { request, context in await chatPreferencesSave(request, context) }
    }

    // MARK: Commands

    /// Executes `request` through the command layer as the dashboard's caller, checked by the
    /// registry like every front's.
    func run(_ request: JSONObject, _ context: AgentRequestContext) async -> JSONValue {
        let caller = CommandCenter.Caller(front: "dashboard", user: context.identity?.name, address: context.remoteAddress, role: context.identity?.role.rawValue)
        // A page shows nothing its user could not ask for over the API (the settings file, with
        // its password hashes, is the admin role's).
        if let name = request["command"]?.stringValue, let command = CommandCatalog.named(name),
           let refusal = AccessPolicy.roleRefusal(command, context.identity) {
            return ["ok": false, "code": .string(refusal.code), "error": .string(refusal.message)]
        }
        switch CommandRegistry.standard.check(.object(request)) {
        case .success(let checked): return await commands.execute(checked, caller: caller)
        case .failure(let refusal): return refusal.json
        }
    }

    // MARK: Rendering

    static let navigation: [(page: String, href: String, label: String)] = [
        ("processes", "/", "Processes"), ("events", "/events", "Events"), ("modules", "/modules", "Modules"),
        ("tasks", "/tasks", "Tasks"), ("schedules", "/schedules", "Schedules"), ("workflows", "/workflows", "Workflows"), ("memory", "/memory", "Memory"), ("executors", "/executors", "Executors"), ("fleet", "/fleet", "Fleet"), ("settings", "/settings", "Settings"), ("chat", "/chat", "Chat"), ("docs", "/docs", "Docs"),
    ]

    static let flashCookie = "agent_flash"

    /// A page: `template` rendered with `data` into the layout, with the session's CSRF token
    /// (its `agent_csrf` cookie, for the forms' hidden field) and the flash message of the last
    /// action.
    func page(_ template: String, title: String, nav: String? = nil, data: [String: Any], request: Request,
              context: AgentRequestContext, status: HTTPResponse.Status = .ok) -> Response {
        Self.page(template, title: title, nav: nav, data: data, request: request, identity: context.identity, status: status)
    }

    /// A page for `identity` (nil: nobody logged in): controls are shown by the role (`admin`
    /// in the templates' data), the layout says the role (`data-role` on the body).
    static func page(_ template: String, title: String, nav: String? = nil, data: [String: Any], request: Request,
                     identity: APIIdentity?, status: HTTPResponse.Status = .ok) -> Response {
        var data = data
        let token = request.cookies[SessionTable.csrfCookie]?.value ?? ""
        data["csrf"] = token
        // Forms that change something only for those allowed to (the API refuses the rest).
        data["admin"] = identity?.role == .admin
        let body = DashboardTemplates.library.render(data, withTemplate: template) ?? ""
        let current = nav ?? template
        // The settings page shows the file, which is the admin role's (password hashes).
        let pages = navigation.filter { identity?.role == .admin || $0.page != "settings" }
        var layout: [String: Any] = [
            "title": title, "page": template, "body": body, "showNav": identity != nil, "role": identity?.role.rawValue ?? "",
            "nav": pages.map { ["href": $0.href, "label": $0.label, "current": $0.page == current] as [String: Any] },
        ]
        if let identity {
            layout["user"] = ["name": identity.name, "role": identity.role.rawValue, "session": identity.bySession, "csrf": token] as [String: Any]
        }
        var headers: HTTPFields = [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"]
        headers.append(HTTPFields.Element(name: .init("X-Frame-Options")!, value: "DENY"))
        headers.append(HTTPFields.Element(name: .init("Content-Security-Policy")!, value: "default-src 'self'; media-src 'self' blob:; frame-ancestors 'none'; form-action 'self'"))
        if let flash = request.cookies[flashCookie]?.value, let decoded = flash.removingPercentEncoding, let kind = decoded.first {
            layout["flash"] = ["kind": kind == "!" ? "error" : "ok", "text": String(decoded.dropFirst())]
            headers.append(HTTPFields.Element(name: .setCookie, value: "\(flashCookie)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict"))
        }
        let html = DashboardTemplates.library.render(layout, withTemplate: "layout") ?? ""
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// 303 to `location` (a path of this dashboard), with a message for the next page.
    static func redirect(to location: String, message: String, failed: Bool) -> Response {
        let encoded = ((failed ? "!" : "+") + message.prefix(500)).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        var headers: HTTPFields = [.location: Self.localPath(location), .cacheControl: "no-store"]
        headers.append(HTTPFields.Element(name: .setCookie, value: "\(flashCookie)=\(encoded); Path=/; Max-Age=60; HttpOnly; SameSite=Strict"))
        return Response(status: .seeOther, headers: headers)
    }

    /// `path` when it is a path of this server, else `/` (no redirect elsewhere).
    static func localPath(_ path: String?) -> String {
        guard let path, path.hasPrefix("/"), !path.hasPrefix("//"), !path.contains("\\"),
              path.unicodeScalars.allSatisfy({ $0.value > 32 && $0.value < 127 }) else { return "/" }
        return path
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The refusal page of a mutating request (403).
    func refused(_ reason: String, request: Request, context: AgentRequestContext, status: HTTPResponse.Status = .forbidden) -> Response {
        Self.refused(reason, request: request, identity: context.identity, status: status)
    }

    /// The refusal page of a dashboard action: the reason, a link back to the page the form
    /// was on (its `Referer`, when a path of this server) and one to the dashboard.
    static func refused(_ reason: String, request: Request, identity: APIIdentity?, status: HTTPResponse.Status) -> Response {
        var back: String?
        if let referer = request.headers[.referer].flatMap(URLComponents.init(string:)) {
            let authority = referer.host.map { host in host + (referer.port.map { ":\($0)" } ?? "") }
            if authority == nil || authority == request.head.authority { back = referer.path }
        }
        return page("refused", title: "Refused", nav: "", data: ["reason": reason, "back": localPath(back)], request: request, identity: identity, status: status)
    }

    /// A dashboard action (a form posted to one of its pages, or the layout's logout form; not
    /// the API): its refusals are pages, not JSON.
    static func isAction(_ request: Request) -> Bool {
        let path = request.uri.path
        guard request.method == .post else { return false }
        if path == "/api/logout" { return CSRFProtection.isForm(request) }
        return !path.hasPrefix("/api/") && path != "/metrics" && path != "/readyz" && path != "/livez"
    }

    /// Reads a posted form. Who may post it and from where was checked before (the access
    /// policy: the admin role, the CSRF checks), as for every request that changes something.
    func mutatingForm(_ request: Request, _ context: AgentRequestContext) async -> Result<FormBody, Refusal> {
        let form: FormBody
        do {
            form = try await FormBody.read(request, limit: maximumBodyBytes)
        } catch {
            return .failure(Refusal(reason: "the form is larger than \(maximumBodyBytes) bytes (http.max_body_bytes)", status: .contentTooLarge))
        }
        return .success(form)
    }

    struct Refusal: Error {
        var reason: String
        var status: HTTPResponse.Status = .forbidden
    }

    /// What an answer refused, as one line.
    static func problem(_ answer: JSONValue) -> String {
        answer["error"]?.stringValue ?? "the command failed"
    }
}

extension DashboardRoutes {
    /// `GET /login`: the form that posts to `POST /api/login` (which sets the session and the
    /// CSRF cookies and sends the browser on to `next`).
    func loginPage(_ request: Request, _ context: AgentRequestContext) -> Response {
        let query = request.uri.queryParameters
        let next = LoginRoutes.localPath(query["next"].map(String.init)) ?? "/"
        var data: [String: Any] = ["next": next]
        switch query["error"].map(String.init) {
        case "wrong"?: data["error"] = "Wrong user name or password."
        case "rate_limited"?: data["error"] = "Too many failed logins; wait a while and try again."
        case let other?: data["error"] = "The login failed (\(other))."
        case nil: break
        }
        return page("login", title: "Log in", nav: "", data: data, request: request, context: context)
    }
}
