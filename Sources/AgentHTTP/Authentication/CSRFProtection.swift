import Foundation
import Hummingbird
import HTTPTypes

/// Cross-site request forgery protection for requests authenticated by the session cookie
/// (a browser sends cookies on its own; bearer tokens are never ambient, so they are
/// exempt). A request that changes something is refused (403) when:
/// - `Origin` is present and is not the server's own origin (scheme + `Host`);
/// - `Sec-Fetch-Site` is present and is not `same-origin`;
/// - it does not echo the session's CSRF token (the `agent_csrf` cookie set at login) in the
///   `X-CSRF-Token` header, or, for an HTML form (`application/x-www-form-urlencoded`), in a
///   `csrf` field. Compared in constant time with the token the server keeps for the session.
struct CSRFProtection: Sendable {
    let sessions: SessionTable
    /// The server speaks HTTPS.
    let secure: Bool
    let maximumBodyBytes: Int

    /// The header a script sends the token in.
    static let header = HTTPField.Name("X-CSRF-Token")!
    /// The form field an HTML form sends the token in.
    static let formField = "csrf"

    /// Refuses a request whose `Origin` or `Sec-Fetch-Site` says it came from another site.
    func checkOrigin(_ request: Request) throws(AccessRefusal) {
        let own = (secure ? "https://" : "http://") + (request.head.authority ?? "").lowercased()
        if let origin = request.headers[.origin], origin.lowercased() != own {
            throw .forbidden("cross-site request refused: Origin \(Self.shown(origin)) is not this server's origin (\(own)); changes are only accepted from the dashboard's own pages")
        }
        if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!], site.lowercased() != "same-origin" {
            throw .forbidden("cross-site request refused: Sec-Fetch-Site is \(Self.shown(site)), not same-origin; changes are only accepted from the dashboard's own pages")
        }
    }

    /// Checks a mutating request of a session; returns the request to pass on (its body
    /// buffered when the token was read from a form).
    func check(_ request: Request, context: AgentRequestContext) async throws -> Request {
        try checkOrigin(request)
        guard let id = request.cookies[SessionTable.sessionCookie]?.value, let session = sessions.find(id) else {
            throw AccessRefusal.unauthorized("the session has ended; log in again")
        }
        var request = request
        var sent = request.headers[Self.header]
        if sent == nil, Self.isForm(request) {
            let body: ByteBuffer
            switch await APIRequestBody.collect(request, limit: maximumBodyBytes) {
            case .success(let collected): body = collected
            case .failure(let refusal): throw AccessRefusal(refusal.status, code: refusal.code, refusal.message)
            }
            request.body = RequestBody(buffer: body)
            // Read by the one rule: JSON sent with curl -d's form type carries no field.
            switch APIRequestBody.decode(body, contentType: request.headers[.contentType]) {
            case .success(.form(let fields)): sent = fields.first { $0.name == Self.formField }?.value
            // A form refused (a field twice, not UTF-8) is refused for what it is.
            case .failure(let refusal): throw AccessRefusal(refusal.status, code: refusal.code, refusal.message, pointer: refusal.pointer)
            case .success: break
            }
        }
        guard let sent else {
            throw AccessRefusal.forbidden("missing CSRF token: a request that changes something from a browser session must send the value of the agent_csrf cookie in the X-CSRF-Token header (or a csrf field of a form)")
        }
        guard ConstantTime.equals(sent, session.csrfToken) else {
            throw AccessRefusal.forbidden("wrong CSRF token: X-CSRF-Token (or the csrf form field) must be the value of this session's agent_csrf cookie")
        }
        return request
    }

    static func isForm(_ request: Request) -> Bool {
        request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") ?? false
    }

    /// A header value for a message: quoted, cut at 100 characters.
    static func shown(_ value: String) -> String {
        let cut = value.count > 100 ? String(value.prefix(100)) + "…" : value
        return "\"" + cut.filter { !$0.isASCII || ($0.asciiValue! >= 0x20 && $0 != "\"") } + "\""
    }
}
