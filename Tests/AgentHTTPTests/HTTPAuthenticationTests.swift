@testable import AgentCommands
import AgentTestSupport
import Foundation
import Testing

/// Who may use the HTTP API: bearer tokens and their roles, against a real agent over loopback.
@Suite(.ownThreads) struct HTTPAuthenticationTests {
    static let tokens = #""tokens": ["${env:AGENT_API_TOKEN}", {"token": "${env:AGENT_READ_TOKEN}", "role": "read", "name": "grafana"}]"#

    /// Every route of the command catalog with its parameters filled in.
    static var catalogRoutes: [(method: String, path: String)] {
        CommandCatalog.all.map { command in
            (command.method, command.path.replacingOccurrences(of: "{name}", with: "trades").replacingOccurrences(of: "{conversation}", with: "default"))
        }
    }

    @Test func nothingButLivezAnswersWithoutCredentials() throws {
        let agent = try APIAgent(http: Self.tokens)
        let live = try agent.request("GET", "/livez")
        #expect(live.status == 200, "\(live.description)")
        // A browser asking for a page is sent to the login form, which answers without credentials.
        let page = try agent.request("GET", "/processes", headers: ["Accept": "text/html,application/xhtml+xml"])
        #expect(page.status == 303 && page.header("Location") == "/login?next=%2Fprocesses", "\(page.description)")
        #expect(try agent.request("GET", "/login").status != 401)
        let routes = Self.catalogRoutes + [("GET", "/nowhere"), ("POST", "/api/nowhere"), ("GET", "/metrics"), ("POST", "/api/logout")]
        for (method, path) in routes {
            let answer = try agent.request(method, path, headers: method == "GET" ? [:] : ["Content-Type": "application/json"], body: method == "GET" ? nil : "{}")
            #expect(answer.status == 401, "\(method) \(path): \(answer.description)")
            #expect(answer.header("WWW-Authenticate")?.hasPrefix("Bearer") == true, "\(method) \(path): \(answer.description)")
            #expect(answer.json?["code"] as? String == "unauthorized", "\(method) \(path): \(answer.description)")
        }
        // Nothing was done: the process still runs.
        let status = try agent.request("GET", "/api/status", headers: APIAgent.bearer(APIAgent.adminToken))
        #expect(status.body.contains(#""state":"running""#) || status.body.contains(#""state":"starting""#), "\(status.description)")
    }

    @Test func aWrongTokenOrSchemeIsRefusedWithInvalidToken() throws {
        let agent = try APIAgent(http: Self.tokens)
        for headers in [APIAgent.bearer(APIAgent.adminToken + "x"), APIAgent.bearer(String(APIAgent.adminToken.dropLast())), APIAgent.bearer(""),
                        ["Authorization": "Basic YWxpY2U6c2VjcmV0"]] {
            let answer = try agent.request("GET", "/api/status", headers: headers)
            #expect(answer.status == 401, "\(headers): \(answer.description)")
            #expect(answer.header("WWW-Authenticate")?.contains("invalid_token") == true, "\(answer.description)")
            #expect(!answer.body.contains(APIAgent.adminToken), "a token was shown: \(answer.body)")
        }
    }

    @Test func theReadRoleReadsButChangesNothing() throws {
        let agent = try APIAgent(http: Self.tokens)
        let read = APIAgent.bearer(APIAgent.readToken)
        for command in CommandCatalog.all where !command.requiresAdmin {
            let path = command.path.replacingOccurrences(of: "{name}", with: "trades").replacingOccurrences(of: "{conversation}", with: "default")
                .replacingOccurrences(of: "{user}", with: "grafana")  // the read token's own name: another user is the admin's
            let answer = try agent.request(command.method, path, headers: read)
            // 0: no answer at all (curl failed), which is no proof of a read allowed.
            #expect(answer.status != 0 && answer.status != 401 && answer.status != 403, "\(command.method) \(path): \(answer.description)")
        }
        // Stop, reload and clear change something; a route outside the catalog that is not GET
        // is taken to change something.
        let changing = CommandCatalog.all.filter(\.requiresAdmin).map { command in
            (command.method, command.path.replacingOccurrences(of: "{name}", with: "trades").replacingOccurrences(of: "{conversation}", with: "default"))
        } + [("POST", "/api/nowhere")]
        // Chat is a person's action any role may send: what a message makes happen is checked
        // against the sender's role where it happens (LanguageModelChatTests).
        #expect(!changing.contains { $0.1 == "/api/chat" })
        // validate changes nothing, but a document it is given may name any library the
        // agent's user owns, and describing it runs that library's code.
        #expect(changing.contains { $0.1 == "/api/validate" })
        // The settings file holds the users' password hashes.
        #expect(changing.contains { $0.1 == "/api/settings" && $0.0 == "GET" })
        for (method, path) in changing {
            let answer = try agent.request(method, path, headers: read.merging(["Content-Type": "application/json"]) { $1 }, body: #"{"text": "hi"}"#)
            #expect(answer.status == 403, "\(method) \(path): \(answer.description)")
            #expect(answer.json?["code"] as? String == "forbidden", "\(answer.description)")
            #expect((answer.json?["error"] as? String)?.contains("grafana has the read role") == true, "\(answer.description)")
            // Each says why: a read that is admin-only does not claim to change something.
            let why = path == "/api/settings" ? "as it shows the settings file, which holds the users' password hashes"
                : path == "/api/validate" ? "as it loads the modules a document names, which runs their code" : "as it changes something"
            #expect((answer.json?["error"] as? String)?.hasSuffix(why) == true, "\(method) \(path): \(answer.description)")
        }
        let status = try agent.request("GET", "/api/status", headers: read)
        #expect(status.status == 200, "\(status.description)")
        #expect(!status.body.contains(#""state":"stopped""#), "a read token stopped something: \(status.body)")
        // The attempts are in the audit, with who and from where.
        let attempt = try agent.waitForAudit { $0.contains("POST /api/processes/trades/stop → refused (403)") }
        #expect(attempt?.hasPrefix("http user grafana from 127.0.0.1:") == true, "\(String(describing: attempt))")
    }

    @Test func anAdminTokenChangesThingsAndTheAuditNamesItAndTheAddress() throws {
        let agent = try APIAgent(http: Self.tokens)
        let answer = try agent.request("POST", "/api/processes/trades/stop", headers: APIAgent.bearer(APIAgent.adminToken))
        #expect(answer.status == 200, "\(answer.description)")
        #expect(answer.json?["ok"] as? Bool == true, "\(answer.description)")
        let line = try agent.waitForAudit { $0.contains("process stop trades") }
        #expect(line?.hasPrefix("http user token #1 from 127.0.0.1:") == true, "\(String(describing: line))")
        #expect(line?.hasSuffix("→ ok") == true, "\(String(describing: line))")
        #expect(try agent.auditLines().allSatisfy { !$0.contains(APIAgent.adminToken) })
    }
}
