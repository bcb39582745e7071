import AgentTestSupport
import Foundation
import Testing

/// The dashboard's schedules page against a real agent: the schedules, one's history, and the
/// pause, resume and run-now forms (session and CSRF token); a read-only user sees no forms.
@Suite(.ownThreads) struct DashboardSchedulePageTests {
    static let settings = #"""
        {"later": {"type": "command", "command": ["/bin/true"]}},
         "schedules": {"daily": {"every": 86400, "run": {"task": "later"}, "description": "once a day"}}
        """#

    @Test func theSchedulesPageListsSchedulesAndItsFormsPauseResumeAndRunNow() throws {
        let agent = try APIAgent(http: try HTTPSession.users(), tasks: Self.settings)
        let (cookie, csrf, _) = try HTTPSession.login(agent)
        let page = try agent.request("GET", "/schedules", headers: ["Cookie": cookie])
        #expect(page.status == 200, "\(page.description)")
        #expect(page.body.contains(#"data-schedule="daily""#) && page.body.contains("every 86400 s") && page.body.contains(">active<"), "\(page.body)")
        #expect(page.body.contains(#"value="pause""#) && page.body.contains(#"value="run""#), "an admin is not offered the forms")

        let form = ["Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded", "Origin": agent.base]
        let pause = try agent.request("POST", "/schedules/daily", headers: form, body: "csrf=\(csrf)&action=pause")
        #expect(pause.status == 303 && pause.header("location") == "/schedules?name=daily", "\(pause.description)")
        let paused = try agent.request("GET", "/schedules?name=daily", headers: ["Cookie": cookie])
        #expect(paused.body.contains(">paused<") && paused.body.contains(#"value="resume""#) && paused.body.contains("History of daily"), "\(paused.body)")

        let run = try agent.request("POST", "/schedules/daily", headers: form, body: "csrf=\(csrf)&action=run")
        #expect(run.status == 303 && run.header("location")?.hasPrefix("/runs/") == true, "\(run.description)")
        let history = try agent.request("GET", "/schedules?name=daily", headers: ["Cookie": cookie])
        #expect(history.body.contains("run now") && history.body.contains(">fired<"), "\(history.body)")
        let resume = try agent.request("POST", "/schedules/daily", headers: form, body: "csrf=\(csrf)&action=resume")
        #expect(resume.status == 303, "\(resume.description)")
        #expect(try agent.request("GET", "/schedules", headers: ["Cookie": cookie]).body.contains(">active<"))

        // Without the CSRF token the form is refused.
        let forged = try agent.request("POST", "/schedules/daily", headers: form, body: "action=pause")
        #expect(forged.status == 403, "\(forged.description)")

        // A read-only user sees the schedules, not the forms.
        let (bobCookie, _, _) = try HTTPSession.login(agent, user: "bob")
        let bobPage = try agent.request("GET", "/schedules", headers: ["Cookie": bobCookie])
        #expect(bobPage.status == 200 && bobPage.body.contains(#"data-schedule="daily""#), "\(bobPage.description)")
        #expect(!bobPage.body.contains(#"value="pause""#), "a read-only user is offered the forms")
    }
}
