import AgentTestSupport
import Foundation
import Testing

/// The dashboard's tasks pages against a real agent: the tasks and their runs, a run's page,
/// running a task and cancelling a run with the forms (session and CSRF token), and what a
/// read-only user is offered.
@Suite(.ownThreads) struct DashboardTaskPageTests {
    static let tasks = #"{"later": {"type": "command", "command": ["/bin/true"], "description": "runs later"}}"#

    @Test func theTasksPageListsTasksAndRunsAndTheFormsRunAndCancel() throws {
        let agent = try APIAgent(http: try HTTPSession.users(), tasks: Self.tasks)
        let (cookie, csrf, _) = try HTTPSession.login(agent)
        let admin = APIAgent.bearer(APIAgent.adminToken)

        // A run an hour from now stays queued: the page lists it.
        let queued = try agent.request("POST", "/api/tasks/later/run", headers: admin.merging(HTTPSession.json) { $1 }, body: #"{"at": "1h", "input": {"n": 1}}"#)
        #expect(queued.status == 200, "\(queued.description)")
        let id = try #require((queued.json?["run"] as? [String: Any])?["id"] as? String)
        let page = try agent.request("GET", "/tasks", headers: ["Cookie": cookie])
        #expect(page.status == 200, "\(page.description)")
        #expect(page.body.contains(#"data-task="later""#) && page.body.contains("runs later"), "\(page.body)")
        #expect(page.body.contains(#"data-run="\#(id)""#), "\(page.body)")
        #expect(page.body.contains(#"action="/tasks/later/run""#), "an admin is not offered the run form")

        // The run's page, then its cancel button.
        let runPage = try agent.request("GET", "/runs/\(id)", headers: ["Cookie": cookie])
        #expect(runPage.status == 200 && runPage.body.contains(">queued<") && runPage.body.contains(#"value="cancel""#), "\(runPage.body)")
        #expect(runPage.body.contains("&quot;n&quot; : 1") || runPage.body.contains("&quot;n&quot;: 1"), "the input is not shown: \(runPage.body)")
        let form = ["Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded", "Origin": agent.base]
        let cancel = try agent.request("POST", "/runs/\(id)", headers: form, body: "csrf=\(csrf)&action=cancel")
        #expect(cancel.status == 303 && cancel.header("location") == "/runs/\(id)", "\(cancel.description)")
        let after = try agent.request("GET", "/runs/\(id)", headers: ["Cookie": cookie])
        #expect(after.body.contains(">cancelled<") && !after.body.contains(#"value="cancel""#), "\(after.body)")

        // The run form: invalid JSON is said so; a valid input queues a run and shows its page.
        let bad = try agent.request("POST", "/tasks/later/run", headers: form, body: "csrf=\(csrf)&input=%7Bnope&priority=high")
        #expect(bad.status == 303 && bad.header("location") == "/tasks", "\(bad.description)")
        #expect(bad.setCookie("agent_flash")?.contains("not%20valid%20JSON") == true, "\(bad.description)")
        let good = try agent.request("POST", "/tasks/later/run", headers: form, body: "csrf=\(csrf)&input=%7B%22n%22%3A2%7D&priority=high")
        #expect(good.status == 303 && good.header("location")?.hasPrefix("/runs/") == true, "\(good.description)")
        let runs = try agent.request("GET", "/api/runs?task=later&limit=5", headers: admin)
        let newest = (runs.json?["runs"] as? [[String: Any]])?.first
        #expect(newest?["priority"] as? String == "high" && (newest?["input"] as? [String: Int]) == ["n": 2], "\(runs.description)")
        #expect(newest?["requested_by"] as? String == "http", "\(runs.description)")

        // Without the CSRF token the form is refused and nothing is queued.
        let forged = try agent.request("POST", "/tasks/later/run", headers: form, body: "input=%7B%7D")
        #expect(forged.status == 403, "\(forged.description)")
        let count = try agent.request("GET", "/api/runs?task=later&limit=50", headers: admin).json?["runs"] as? [Any]
        #expect(count?.count == 2, "\(String(describing: count))")

        // A read-only user sees the tasks and runs, not the forms.
        let (bobCookie, _, _) = try HTTPSession.login(agent, user: "bob")
        let bobPage = try agent.request("GET", "/tasks", headers: ["Cookie": bobCookie])
        #expect(bobPage.status == 200 && bobPage.body.contains(#"data-run="\#(id)""#), "\(bobPage.description)")
        #expect(!bobPage.body.contains(#"action="/tasks/later/run""#), "a read-only user is offered the run form")

        let missing = try agent.request("GET", "/runs/no-such-run", headers: ["Cookie": cookie])
        #expect(missing.status == 404 && missing.body.contains("no run with id"), "\(missing.description)")
    }
}
