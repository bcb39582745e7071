import Foundation

/// Dashboard users with a bcrypt password and their login over HTTP, for the tests of
/// sessions, of the pages behind them and of a replica agent's front.
package enum HTTPSession {
    package static let password = "correct horse battery staple"

    package static func users(limit: String = "") throws -> String {
        let hash = try APIAgent.hash(password)
        return #""tokens": ["${env:AGENT_API_TOKEN}"], "users": {"alice": {"password_hash": "\#(hash)"}, "bob": {"password_hash": "\#(hash)", "role": "read"}}"# + limit
    }

    package static let json = ["Content-Type": "application/json"]

    /// Logs in; returns the cookies to send (`Cookie:` value) and the CSRF token.
    package static func login(_ agent: APIAgent, user: String = "alice") throws -> (cookie: String, csrf: String, response: CurlResponse) {
        let answer = try agent.request("POST", "/api/login", headers: json, body: #"{"user": "\#(user)", "password": "\#(password)"}"#)
        let session = answer.cookieValue("agent_session") ?? ""
        let csrf = answer.cookieValue("agent_csrf") ?? ""
        return ("agent_session=\(session); agent_csrf=\(csrf)", csrf, answer)
    }
}
