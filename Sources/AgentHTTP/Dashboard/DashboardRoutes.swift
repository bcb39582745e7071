import AgentRuntime
import Foundation
import Hummingbird
import JSONSchema
import Mustache

/// The dashboard at `/`: pages rendered on the server from the answers of the same commands
/// the API executes (through ``CommandCenter``, never from supervision state), forms that post
/// those commands (each checked by ``DashboardCSRF``), one style sheet and a small script that
/// refreshes pages by polling the API.
struct DashboardRoutes: Sendable {
    let commands: CommandCenter
    let maximumBodyBytes: Int

    func register(on router: Router<AgentRequestContext>) {
        router.get("/dashboard.css") { _, _ in Self.asset(DashboardAssets.css, type: "text/css; charset=utf-8") }
        router.get("/dashboard.js") { _, _ in Self.asset(DashboardAssets.javascript, type: "text/javascript; charset=utf-8") }
        router.get("/") { request, context in await processesPage(request, context) }
        router.get("/processes/{name}") { request, context in await processPage(request, context) }
        router.post("/processes/{name}") { request, context in await processAction(request, context) }
        router.get("/events") { request, context in await eventsPage(request, context) }
        router.get("/modules") { request, context in await modulesPage(request, context) }
        router.post("/modules") { request, context in await moduleAction(request, context) }
        router.get("/settings") { request, context in await settingsPage(request, context) }
        router.post("/settings") { request, context in await settingsSubmit(request, context) }
        router.get("/chat") { request, context in await chatPage(request, context) }
        router.post("/chat") { request, context in await chatSend(request, context) }
        router.post("/chat/clear") { request, context in await chatClear(request, context) }
    }

    // MARK: Commands

    /// Executes `request` through the command layer as the dashboard's caller.
    func run(_ request: JSONObject, _ context: AgentRequestContext) async -> JSONValue {
        let caller = CommandCenter.Caller(front: "dashboard", user: context.identity?.name, address: context.remoteAddress)
        return await commands.execute(.object(request), caller: caller)
    }

    // MARK: Rendering

    static let navigation: [(page: String, href: String, label: String)] = [
        ("processes", "/", "Processes"), ("events", "/events", "Events"), ("modules", "/modules", "Modules"),
        ("settings", "/settings", "Settings"), ("chat", "/chat", "Chat"),
    ]

    static let flashCookie = "agent_flash"

    /// A page: `template` rendered with `data` into the layout. Gives the page the CSRF token
    /// (set as a cookie when the browser has none yet) and the flash message of the last action.
    func page(_ template: String, title: String, nav: String? = nil, data: [String: Any], request: Request,
              context: AgentRequestContext, status: HTTPResponse.Status = .ok) -> Response {
        let (token, setCookie) = DashboardCSRF.token(for: request)
        var data = data
        data["csrf"] = token
        let body = DashboardTemplates.library.render(data, withTemplate: template) ?? ""
        let current = nav ?? template
        var layout: [String: Any] = [
            "title": title, "page": template, "body": body,
            "nav": Self.navigation.map { ["href": $0.href, "label": $0.label, "current": $0.page == current] as [String: Any] },
        ]
        if let user = context.identity?.name { layout["user"] = user }
        var headers: HTTPFields = [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"]
        headers.append(HTTPFields.Element(name: .init("X-Frame-Options")!, value: "DENY"))
        headers.append(HTTPFields.Element(name: .init("Content-Security-Policy")!, value: "default-src 'self'; frame-ancestors 'none'; form-action 'self'"))
        if let setCookie { headers.append(HTTPFields.Element(name: .setCookie, value: setCookie)) }
        if let flash = request.cookies[Self.flashCookie]?.value, let decoded = flash.removingPercentEncoding, let kind = decoded.first {
            layout["flash"] = ["kind": kind == "!" ? "error" : "ok", "text": String(decoded.dropFirst())]
            headers.append(HTTPFields.Element(name: .setCookie, value: "\(Self.flashCookie)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict"))
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
        page("refused", title: "Refused", nav: "", data: ["reason": reason], request: request, context: context, status: status)
    }

    /// Reads a posted form and checks that it may change something: who (an admin, once
    /// logins exist) and where from (``DashboardCSRF``). Returns the form, or the refusal.
    func mutatingForm(_ request: Request, _ context: AgentRequestContext) async -> Result<FormBody, Refusal> {
        if let identity = context.identity, identity.role != .admin {
            return .failure(Refusal(reason: "\(identity.name) may read but not change anything (role \(identity.role.rawValue))"))
        }
        let form: FormBody
        do {
            form = try await FormBody.read(request, limit: maximumBodyBytes)
        } catch {
            return .failure(Refusal(reason: "the form is larger than \(maximumBodyBytes) bytes (http.max_body_bytes)", status: .contentTooLarge))
        }
        if let reason = DashboardCSRF.refusal(of: request, form: form) { return .failure(Refusal(reason: reason)) }
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
