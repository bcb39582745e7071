import AgentTestSupport
import Foundation
import Testing

/// The dashboard's memory page against a real agent: keys and values, the write and delete
/// forms (session and CSRF token), a workflow run's scope; a read-only user sees no forms.
@Suite(.ownThreads) struct DashboardMemoryPageTests {
    @Test func theMemoryPageShowsKeysAndItsFormsWriteAndDelete() throws {
        // A workflow whose runs wait: a run's keys need a run that exists.
        let agent = try APIAgent(http: try HTTPSession.users(),
                                 tasks: #"{}, "workflows": {"hold": {"steps": [{"id": "wait", "wait_signal": {"name": "go"}}]}}"#)
        let (cookie, csrf, _) = try HTTPSession.login(agent)
        let form = ["Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded", "Origin": agent.base]

        let empty = try agent.request("GET", "/memory", headers: ["Cookie": cookie])
        #expect(empty.status == 200, "\(empty.description)")
        #expect(empty.body.contains("No keys") && empty.body.contains(#"id="memory-set""#), "\(empty.body)")

        let value = #"{"tier": 3, "name": "<Ada>"}"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let set = try agent.request("POST", "/memory", headers: form, body: "csrf=\(csrf)&action=set&key=customer%2F42&value=\(value)")
        #expect(set.status == 303 && set.header("location") == "/memory", "\(set.description)")
        let page = try agent.request("GET", "/memory", headers: ["Cookie": cookie])
        #expect(page.body.contains(#"data-key="customer/42""#), "\(page.body)")
        #expect(page.body.contains("&lt;Ada&gt;") && !page.body.contains("<Ada>"), "the value is escaped")
        #expect(page.body.contains(#"name="expected_version" value="1""#), "\(page.body)")
        let api = try agent.request("GET", "/api/memory/entry?key=customer%2F42", headers: ["Cookie": cookie])
        #expect(api.body.contains(#""tier":3"#), "\(api.body)")

        // Not JSON: refused with a message, nothing written.
        let bad = try agent.request("POST", "/memory", headers: form, body: "csrf=\(csrf)&action=set&key=x&value=plain")
        #expect(bad.status == 303 && bad.header("set-cookie")?.contains("not%20valid%20JSON") == true, "\(bad.description)")
        #expect(try agent.request("GET", "/api/memory/entry?key=x", headers: ["Cookie": cookie]).status == 404)

        // A workflow run's scope is its own; a run that does not exist has none.
        let started = try runProgram("agent-control", ["workflow", "run", "hold", "--settings", agent.run.settingsFile], timeout: 120)
        let run = started.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(started.status == 0 && !run.isEmpty, "\(started.stdout)\(started.stderr)")
        let scoped = try agent.request("POST", "/memory", headers: form, body: "csrf=\(csrf)&action=set&key=step&value=1&run=\(run)")
        #expect(scoped.status == 303 && scoped.header("location") == "/memory?run=\(run)", "\(scoped.description)")
        #expect(try agent.request("GET", "/memory?run=\(run)", headers: ["Cookie": cookie]).body.contains(#"data-key="step""#))
        let typo = try agent.request("POST", "/memory", headers: form, body: "csrf=\(csrf)&action=set&key=step&value=1&run=\(run)0")
        #expect(typo.status == 303 && typo.header("set-cookie")?.contains("no%20workflow%20run") == true, "\(typo.description)")
        #expect(!(try agent.request("GET", "/memory", headers: ["Cookie": cookie]).body.contains(#"data-key="step""#)))
        // Its page says so, and offers neither "No keys" nor a form to write to it.
        let missing = try agent.request("GET", "/memory?run=\(run)0", headers: ["Cookie": cookie])
        #expect(missing.body.contains("there is no workflow run"), "\(missing.body)")
        #expect(!missing.body.contains("No keys") && !missing.body.contains(#"id="memory-set""#), "\(missing.body)")

        // Delete at the version shown; a stale version is refused.
        let stale = try agent.request("POST", "/memory", headers: form, body: "csrf=\(csrf)&action=delete&key=customer%2F42&expected_version=7")
        #expect(stale.status == 303 && stale.header("set-cookie")?.contains("version%201") == true, "\(stale.description)")
        let delete = try agent.request("POST", "/memory", headers: form, body: "csrf=\(csrf)&action=delete&key=customer%2F42&expected_version=1")
        #expect(delete.status == 303, "\(delete.description)")
        #expect(try agent.request("GET", "/api/memory/entry?key=customer%2F42", headers: ["Cookie": cookie]).status == 404)

        // Without the CSRF token the form is refused.
        let forged = try agent.request("POST", "/memory", headers: form, body: "action=set&key=y&value=1")
        #expect(forged.status == 403, "\(forged.description)")

        // A read-only user sees the keys, not the forms.
        let (bobCookie, _, _) = try HTTPSession.login(agent, user: "bob")
        let bobPage = try agent.request("GET", "/memory?run=\(run)", headers: ["Cookie": bobCookie])
        #expect(bobPage.status == 200 && bobPage.body.contains(#"data-key="step""#), "\(bobPage.description)")
        #expect(!bobPage.body.contains(#"id="memory-set""#) && !bobPage.body.contains(#"value="delete""#), "a read-only user is offered the forms")
    }
}

extension DashboardMemoryPageTests {
    /// The page's "more" link carries the last key in its query whole: a key with `&`, `=` or
    /// `+` (keys may hold any printable character) went into it as it was, and the next page
    /// began elsewhere.
    @Test func theNextPageLinkCarriesAKeyWithQueryCharactersWhole() throws {
        let agent = try APIAgent(http: try HTTPSession.users(), tasks: "{}")
        let (cookie, csrf, _) = try HTTPSession.login(agent)
        let form = ["Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded", "Origin": agent.base]
        let odd = "a099&after=zz+1"
        let keys = (0..<99).map { String(format: "a%03d", $0) } + [odd, "b"]
        for key in keys {
            let encoded = key.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let set = try agent.request("POST", "/memory", headers: form, body: "csrf=\(csrf)&action=set&key=\(encoded)&value=1")
            #expect(set.status == 303 && set.header("set-cookie")?.contains("not%20") != true, "\(key): \(set.description)")
        }
        let first = try agent.request("GET", "/memory", headers: ["Cookie": cookie])
        #expect(first.body.contains(#"data-key="a099&amp;after=zz+1""#), "the 100th key is on the first page")
        let link = try #require(first.body.components(separatedBy: #"href="/memory?after="#).dropFirst().first?.split(separator: "\"").first, "a link to the next page")
        let next = "/memory?after=" + String(link).replacingOccurrences(of: "&amp;", with: "&")
        let second = try agent.request("GET", next, headers: ["Cookie": cookie])
        #expect(second.body.contains(#"data-key="b""#) && !second.body.contains(#"data-key="a0"#), "the next page starts after the odd key: \(next)")
    }
}
