import Hummingbird

/// The dashboard's protection against cross-site request forgery, for every form it posts:
///
/// - a double-submit token: the `agent_csrf` cookie (set on the first page, SameSite=Strict)
///   must be echoed in the form's hidden `csrf` field (or the `X-CSRF-Token` header);
/// - the browser's own word on where the request comes from: an `Origin` other than the
///   dashboard's, or `Sec-Fetch-Site` other than `same-origin`/`none`, is refused even with a
///   matching token. Cookies do not tell ports apart, so a page of another server on the same
///   host can read and echo the cookie; its origin still differs.
enum DashboardCSRF {
    static let cookieName = "agent_csrf"
    static let fieldName = "csrf"
    static let headerName = HTTPFields.Element.Name("X-CSRF-Token")!
    static let fetchSite = HTTPFields.Element.Name("Sec-Fetch-Site")!

    /// The request's token, or a new one (with the `Set-Cookie` header to send) when it has none.
    static func token(for request: Request) -> (token: String, setCookie: String?) {
        if let existing = request.cookies[cookieName]?.value, isWellFormed(existing) { return (existing, nil) }
        var generator = SystemRandomNumberGenerator()
        let token = (0..<4).map { _ in String(generator.next() as UInt64, radix: 16).leftPadded(to: 16) }.joined()
        return (token, "\(cookieName)=\(token); Path=/; SameSite=Strict")
    }

    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 64 && token.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// Why a mutating request is refused, or nil when it may go on.
    static func refusal(of request: Request, form: FormBody?) -> String? {
        if let site = request.headers[fetchSite], site != "same-origin", site != "none" {
            return "the request came from another site (Sec-Fetch-Site: \(site)); use the dashboard's own forms"
        }
        if let origin = request.headers[.origin] {
            let host = request.head.authority ?? ""
            guard origin == "http://" + host || origin == "https://" + host else {
                return "the request came from another origin (\(origin)); use the dashboard's own forms"
            }
        }
        guard let cookie = request.cookies[cookieName]?.value, isWellFormed(cookie) else {
            return "the CSRF cookie \(cookieName) is missing; reload the page and try again"
        }
        let echoed = request.headers[headerName] ?? form?[fieldName]
        guard let echoed, constantTimeEqual(echoed, cookie) else {
            return "the CSRF token does not match the \(cookieName) cookie; reload the page and try again"
        }
        return nil
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
