@testable import AgentCommands
import AgentTestSupport
import Foundation
import Testing

/// The role check is made on the command the router resolved: no spelling of a path reaches an
/// admin command with the read role, and no dashboard page shows what its user may not ask for.
@Suite(.ownThreads) struct HTTPPathSpellingTests {
    /// The spellings of `path` a router may take for it: a trailing slash, doubled slashes at
    /// the start and inside, and the absolute form of the request line.
    static func spellings(_ path: String, port: Int) -> [String] {
        let inner = path.replacingOccurrences(of: "/api/", with: "/api//")
        return [path, path + "/", "/" + path, inner, "http://127.0.0.1:\(port)" + path, "http://127.0.0.1:\(port)" + inner + "/"]
    }

    static func port(_ agent: APIAgent) -> Int { Int(agent.base.split(separator: ":").last ?? "") ?? 0 }

    @Test func everySpellingOfEveryAdminRouteIsRefusedToTheReadRole() throws {
        let hash = try APIAgent.hash(HTTPSession.password)
        let agent = try APIAgent(http: HTTPAuthenticationTests.tokens + #", "users": {"alice": {"password_hash": "\#(hash)"}}"#)
        let port = Self.port(agent)
        let read = ["Authorization": "Bearer \(APIAgent.readToken)"]
        var refused = 0
        for command in CommandCatalog.all where command.requiresAdmin {
            let path = command.path.replacingOccurrences(of: "{name}", with: "trades").replacingOccurrences(of: "{conversation}", with: "default")
                .replacingOccurrences(of: "{id}", with: "1").replacingOccurrences(of: "{step}", with: "s")
            for spelling in Self.spellings(path, port: port) {
                let answer = try RawHTTP.request(port: port, command.method, spelling, body: command.method == "GET" ? nil : "{}", headers: read)
                #expect(!(200..<300).contains(answer.status) && answer.json?["ok"] as? Bool != true,
                        "\(command.name): \(command.method) \(spelling) answered the read role: \(answer.description.prefix(300))")
                #expect(!answer.body.contains("password_hash") && !answer.body.contains(hash), "\(command.method) \(spelling): \(answer.body.prefix(300))")
                if answer.status == 403 { refused += 1 }
            }
        }
        #expect(refused > 0)
        // The spellings the issue saw reach the settings: each is refused by the role, not missed.
        for spelling in Self.spellings("/api/settings", port: port) {
            let answer = try RawHTTP.request(port: port, "GET", spelling, headers: read)
            #expect(answer.status == 403 && answer.json?["code"] as? String == "forbidden", "GET \(spelling): \(answer.description.prefix(300))")
        }
        // The admin token still reads them.
        let admin = try RawHTTP.request(port: port, "GET", "/api/settings/", headers: ["Authorization": "Bearer \(APIAgent.adminToken)"])
        #expect(admin.status == 200 && admin.body.contains("password_hash"), "\(admin.description.prefix(300))")
    }

    @Test func theSettingsPageShowsAReadUserNoPasswordHash() throws {
        let agent = try APIAgent(http: try HTTPSession.users())
        let (cookie, _, _) = try HTTPSession.login(agent, user: "bob")
        let page = try agent.request("GET", "/settings", headers: ["Cookie": cookie, "Accept": "text/html"])
        #expect(!page.body.contains("password_hash"), "\(page.body.prefix(600))")
        #expect(page.body.contains("has the read role"), "\(page.body.prefix(600))")
        let (adminCookie, _, _) = try HTTPSession.login(agent, user: "alice")
        let shown = try agent.request("GET", "/settings", headers: ["Cookie": adminCookie, "Accept": "text/html"])
        #expect(shown.body.contains("password_hash"), "\(shown.body.prefix(600))")
    }

    /// The access check finds a route's command as the router does, splitting at the byte `/`:
    /// a `/` followed by a combining mark is one `Character`, which joined two segments.
    @Test func aSegmentBeginningWithACombiningMarkIsASegmentOfItsOwn() {
        var checked = 0
        for command in CommandCatalog.all where command.path.contains("{") {
            let target = command.path.replacingOccurrences(of: #"\{[^/}]+\}"#, with: "\u{301}x", options: .regularExpression)
            let found = CommandCatalog.command(method: command.method, target: Substring(target))
            #expect(found?.path == command.path, "\(command.method) \(target): \(found?.name ?? "no command")")
            checked += 1
        }
        #expect(checked > 0)
    }
}
