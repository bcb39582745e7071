import AgentTestSupport
import Foundation
import Testing

/// Browser sessions: login with a bcrypt hash, the session cookie, CSRF protection of every
/// change, logout, and the rate limit of failed logins, against a real agent over loopback.
@Suite(.ownThreads) struct HTTPSessionTests {
    @Test func aLoginSessionReadsAndChangesOnlyWithItsCSRFTokenFromItsOwnOrigin() throws {
        let agent = try APIAgent(http: try HTTPSession.users())
        let wrong = try agent.request("POST", "/api/login", headers: HTTPSession.json, body: #"{"user": "alice", "password": "nope"}"#)
        #expect(wrong.status == 401, "\(wrong.description)")
        #expect(wrong.setCookie("agent_session") == nil)

        let (cookie, csrf, login) = try HTTPSession.login(agent)
        #expect(login.status == 200, "\(login.description)")
        #expect(login.json?["user"] as? String == "alice")
        #expect(login.json?["role"] as? String == "admin")
        let sessionCookie = try #require(login.setCookie("agent_session"))
        for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] { #expect(sessionCookie.contains(attribute), "\(sessionCookie)") }
        #expect(!sessionCookie.contains("Secure"), "Secure without TLS: \(sessionCookie)")
        #expect(login.cookieValue("agent_session")?.count == 43, "not 256 random bits: \(sessionCookie)")
        let csrfCookie = try #require(login.setCookie("agent_csrf"))
        #expect(!csrfCookie.contains("HttpOnly") && csrfCookie.contains("SameSite=Strict"), "\(csrfCookie)")
        #expect(login.json?["csrf_token"] as? String == csrf)

        let status = try agent.request("GET", "/api/status", headers: ["Cookie": cookie])
        #expect(status.status == 200, "\(status.description)")
        let who = try agent.request("GET", "/api/session", headers: ["Cookie": cookie])
        #expect(who.json?["user"] as? String == "alice" && who.json?["by"] as? String == "session", "\(who.description)")

        let own = agent.base
        let refused: [[String: String]] = [
            ["Cookie": cookie, "Origin": own],                                          // no token
            ["Cookie": cookie, "Origin": own, "X-CSRF-Token": csrf + "x"],             // wrong token
            ["Cookie": cookie, "Origin": "http://evil.example", "X-CSRF-Token": csrf], // foreign origin
            ["Cookie": cookie, "Origin": "null", "X-CSRF-Token": csrf],
            ["Cookie": cookie, "Sec-Fetch-Site": "cross-site", "X-CSRF-Token": csrf],
            ["Cookie": cookie, "Sec-Fetch-Site": "same-site", "X-CSRF-Token": csrf],
        ]
        for headers in refused {
            let answer = try agent.request("POST", "/api/processes/trades/stop", headers: headers)
            #expect(answer.status == 403, "\(headers): \(answer.description)")
            #expect(answer.json?["code"] as? String == "forbidden", "\(answer.description)")
            let error = answer.json?["error"] as? String ?? ""
            #expect(error.contains("CSRF") || error.contains("cross-site"), "\(error)")
        }
        let still = try agent.request("GET", "/api/status", headers: ["Cookie": cookie])
        #expect(!still.body.contains(#""state":"stopped""#), "a refused request stopped the process: \(still.body)")

        let stop = try agent.request("POST", "/api/processes/trades/stop", headers: ["Cookie": cookie, "Origin": own, "Sec-Fetch-Site": "same-origin", "X-CSRF-Token": csrf])
        #expect(stop.status == 200, "\(stop.description)")
        // A stop is asked, not awaited: until the worker has ended, a start answers 409 ("already
        // stopping"), which a loaded machine's slower stop once showed.
        #expect(HTTPAgent.eventually {
            (try? agent.request("GET", "/api/status", headers: ["Cookie": cookie]))?.body.contains(#""state":"stopped""#) == true
        }, "trades did not stop within 60 s")
        // A plain HTML form carries the token in a field.
        let start = try agent.request("POST", "/api/processes/trades/start", headers: ["Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"],
                                      body: "csrf=" + csrf)
        #expect(start.status == 200, "\(start.description)")
        let forged = try agent.waitForAudit { $0.contains("→ refused (403): cross-site request refused: Origin \"http://evil.example\"") }
        #expect(forged?.hasPrefix("http user alice from 127.0.0.1:") == true, "\(String(describing: forged))")
        let line = try agent.waitForAudit { $0.contains("process stop trades") }
        #expect(line?.hasPrefix("http user alice from 127.0.0.1:") == true, "\(String(describing: line))")

        // The read role may log in and read, not change.
        let (bobCookie, bobCSRF, _) = try HTTPSession.login(agent, user: "bob")
        #expect(try agent.request("GET", "/api/status", headers: ["Cookie": bobCookie]).status == 200)
        let bobStop = try agent.request("POST", "/api/processes/trades/stop", headers: ["Cookie": bobCookie, "X-CSRF-Token": bobCSRF])
        #expect(bobStop.status == 403, "\(bobStop.description)")
        // …and the dashboard does not offer them what would be refused.
        let bobPage = try agent.request("GET", "/", headers: ["Cookie": bobCookie])
        #expect(bobPage.status == 200 && bobPage.body.contains("trades"), "\(bobPage.description)")
        #expect(!bobPage.body.contains(#"value="restart""#), "a read-only user is offered a restart button")
        // Any role may chat (the tools decide what a message may do): the reader gets the form,
        // and its post (the page without script) reaches the chat instead of a refusal.
        let bobChat = try agent.request("GET", "/chat", headers: ["Cookie": bobCookie])
        #expect(bobChat.body.contains(#"id="chat-form""#) && !bobChat.body.contains(#"action="/chat/clear""#), "\(bobChat.description)")
        let bobSays = try agent.request("POST", "/chat", headers: ["Cookie": bobCookie, "Content-Type": "application/x-www-form-urlencoded"],
                                        body: "csrf=\(bobCSRF)&text=hello")
        #expect(bobSays.status == 303 && bobSays.header("Location")?.hasPrefix("/chat") == true, "\(bobSays.description)")
        let alicePage = try agent.request("GET", "/", headers: ["Cookie": cookie])
        #expect(alicePage.body.contains(#"value="restart""#), "\(alicePage.description)")

        let logout = try agent.request("POST", "/api/logout", headers: ["Cookie": cookie, "X-CSRF-Token": csrf])
        #expect(logout.status == 200, "\(logout.description)")
        #expect(logout.setCookie("agent_session")?.contains("Max-Age=0") == true, "\(logout.description)")
        let after = try agent.request("GET", "/api/status", headers: ["Cookie": cookie])
        #expect(after.status == 401, "the session outlived its logout: \(after.description)")
        #expect(try agent.waitForAudit { $0.contains("user alice") && $0.contains("logout → ok") } != nil)
    }

    @Test func failuresCountPerUserFromAnyAddressAndPerAddressForAnyUser() throws {
        let agent = try APIAgent(http: try HTTPSession.users(limit: #", "login_limit": {"failures": 2, "window": 600}"#))
        // Loopback has every 127.x address: curl binds another one as its source.
        func attempt(_ user: String, _ password: String, from address: String) throws -> Int {
            try agent.request("POST", "/api/login", headers: HTTPSession.json, body: #"{"user": "\#(user)", "password": "\#(password)"}"#,
                              extra: ["--interface", address]).status
        }
        #expect(try attempt("alice", "wrong", from: "127.0.0.2") == 401)
        #expect(try attempt("alice", "wrong", from: "127.0.0.3") == 401)
        // alice has had 2 failures (from two addresses): refused from a third, even rightly.
        #expect(try attempt("alice", HTTPSession.password, from: "127.0.0.4") == 429)
        // Bob is not limited from a fresh address...
        #expect(try attempt("bob", HTTPSession.password, from: "127.0.0.4") == 200)
        // ...but an address with 2 failures is, for any user.
        #expect(try attempt("carol", "wrong", from: "127.0.0.5") == 401)
        #expect(try attempt("dave", "wrong", from: "127.0.0.5") == 401)
        #expect(try attempt("bob", HTTPSession.password, from: "127.0.0.5") == 429)
        let logged = agent.run.stderrLines.filter { $0.contains("failed login for user \"dave\" from 127.0.0.5:") }
        #expect(logged.count == 1, "\(agent.run.transcript)")
    }

    @Test func aLoginFromAnotherSiteIsRefused() throws {
        let agent = try APIAgent(http: try HTTPSession.users())
        let answer = try agent.request("POST", "/api/login", headers: HTTPSession.json.merging(["Origin": "http://evil.example"]) { $1 },
                                       body: #"{"user": "alice", "password": "\#(HTTPSession.password)"}"#)
        #expect(answer.status == 403, "\(answer.description)")
        #expect(answer.setCookie("agent_session") == nil)
    }

    @Test func aFormLoginRedirectsToALocalPageOnly() throws {
        let agent = try APIAgent(http: try HTTPSession.users())
        let form = ["Content-Type": "application/x-www-form-urlencoded"]
        let good = try agent.request("POST", "/api/login", headers: form, body: "user=alice&password=correct+horse+battery+staple&next=%2Fprocesses")
        #expect(good.status == 303, "\(good.description)")
        #expect(good.header("Location") == "/processes")
        #expect(good.cookieValue("agent_session") != nil)
        let away = try agent.request("POST", "/api/login", headers: form, body: "user=alice&password=correct+horse+battery+staple&next=%2F%2Fevil.example")
        #expect(away.header("Location") == "/", "\(away.description)")
        // `//` and a combining mark: no `//` prefix as `Character`s, but another host to a browser.
        let marked = try agent.request("POST", "/api/login", headers: form, body: "user=alice&password=correct+horse+battery+staple&next=%2F%2F%CC%81evil.example")
        #expect(marked.header("Location") == "/", "\(marked.description)")
        let bad = try agent.request("POST", "/api/login", headers: form, body: "user=alice&password=wrong")
        #expect(bad.status == 303 && bad.header("Location")?.hasPrefix("/login?error=wrong") == true, "\(bad.description)")
    }

    @Test func failedLoginsAreRateLimitedLoggedAndAudited() throws {
        let agent = try APIAgent(http: try HTTPSession.users(limit: #", "login_limit": {"failures": 3, "window": 900}"#))
        let guess = "hunter2-guess"
        for attempt in 1...3 {
            let answer = try agent.request("POST", "/api/login", headers: HTTPSession.json, body: #"{"user": "alice", "password": "\#(guess)"}"#)
            #expect(answer.status == 401, "attempt \(attempt): \(answer.description)")
        }
        let limited = try agent.request("POST", "/api/login", headers: HTTPSession.json, body: #"{"user": "alice", "password": "\#(guess)"}"#)
        #expect(limited.status == 429, "\(limited.description)")
        #expect(limited.json?["code"] as? String == "rate_limited")
        let retry = Int(limited.header("Retry-After") ?? "") ?? 0
        #expect(retry > 800 && retry <= 900, "\(limited.description)")
        // Even the right password waits: the limit is checked before the password.
        let right = try HTTPSession.login(agent).response
        #expect(right.status == 429, "\(right.description)")
        // Another user from the same address is refused too (per address).
        let other = try HTTPSession.login(agent, user: "bob").response
        #expect(other.status == 429, "\(other.description)")

        let logged = agent.run.stderrLines.filter { $0.contains("failed login for user \"alice\" from 127.0.0.1:") }
        #expect(logged.count == 3, "\(agent.run.transcript)")
        #expect(!agent.run.transcript.contains(guess), "the password was logged")
        let audit = try agent.waitForAudit { $0.contains("login → refused") }
        #expect(audit?.hasPrefix("http user alice from 127.0.0.1:") == true, "\(String(describing: audit))")
        let deadline = Date().addingTimeInterval(20)
        while try agent.auditLines().filter({ $0.contains("login → refused") }).count < 3, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        #expect(try agent.auditLines().filter { $0.contains("login → refused") }.count == 3)
        #expect(try agent.auditLines().allSatisfy { !$0.contains(guess) })
    }
}
