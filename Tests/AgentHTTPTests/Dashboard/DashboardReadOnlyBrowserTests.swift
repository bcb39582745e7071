import AgentTestSupport
import Foundation
import Testing

/// The dashboard for a user with the read role, in a real browser (Chromium over WebDriver)
/// against a real agent: no page shows a control the role cannot use (no form that posts but
/// the logout; the approval of a step whose approvers are others), and an action the agent
/// refuses anyway answers a page with the reason and a way back, not JSON.
@Suite(.ownThreads, .serialized) struct DashboardReadOnlyBrowserTests {
    static let token = "read-only-dashboard-admin-token-0123"
    static let settings = #"""
    {
      "enabled_modules": ["sample"],
      "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"], "users": {"rita": {"password_hash": "HASH", "role": "read"}}},
      "processes": {"trades": {"type": "trade_feed", "pairs": ["X/Y"], "interval": 1}},
      "tasks": {"job": {"type": "command", "command": ["/bin/true"]}},
      "schedules": {"hourly": {"every": 3600, "run": {"task": "job"}}},
      "workflows": {"refund": {"steps": [{"id": "ok", "approval": {"approvers": ["admin"], "prompt": "Refund?"}}]}}
    }
    """#

    @Test(.enabled(if: WebDriver.unavailableReason == nil, "needs a browser: \(WebDriver.unavailableReason ?? "")"))
    func aReaderSeesNoControlItCannotUseAndARefusedActionIsAPage() throws {
        let login = try DashboardLogin(settings: Self.settings, page: "/", showing: "#processes",
                                       environment: ["AGENT_API_TOKEN": Self.token], user: "rita")
        defer { login.close() }
        let (browser, base) = (login.browser, login.base)
        let admin = ["Authorization": "Bearer \(Self.token)", "Content-Type": "application/json"]
        // A task run and a workflow run waiting for its approval, so that their pages have something to offer.
        let task = try curl("POST", base + "/api/tasks/job/run", headers: admin, body: #"{"wait": true}"#)
        let taskRun = try #require((task.json?["run"] as? [String: Any])?["id"] as? String, "\(task.description)")
        let flow = try curl("POST", base + "/api/workflows/refund/run", headers: admin, body: "{}")
        let flowRun = try #require((flow.json?["run"] as? [String: Any])?["id"] as? String, "\(flow.description)")
        #expect(try browser.execute("return document.body.dataset.role") as? String == "read")

        // Every page of the navigation, a task run's and a workflow run's: no form that changes something.
        let pages = try browser.execute("return Array.from(document.querySelectorAll('header nav a')).map(a => a.getAttribute('href'))") as? [String] ?? []
        #expect(pages.contains("/tasks") && pages.contains("/workflows") && !pages.contains("/settings"), "\(pages)")
        try browser.navigate(to: base + "/workflow-runs/" + flowRun)
        try browser.wait("the approval waiting", timeout: 30) {
            if try browser.text("#workflow-run-status") != "waiting" { try browser.navigate(to: base + "/workflow-runs/" + flowRun) }
            return try browser.text("#workflow-run-status") == "waiting"
        }
        #expect(try browser.text(#"#workflow-steps tr[data-step="ok"]"#).contains("Waits for one of its approvers"))
        for page in pages + ["/runs/" + taskRun, "/workflow-runs/" + flowRun, "/processes/trades"] {
            try browser.navigate(to: base + page)
            try browser.wait("the page \(page)") { try browser.find("main h1") != nil }
            let controls = try browser.execute("""
                return Array.from(document.querySelectorAll('main form[method=post], main form[method=POST]')).map(f => f.getAttribute('action'))
                """) as? [String] ?? []
            // The chat's form is the reader's own: any role may chat (ChatStreamingBrowserTests).
            #expect(controls.filter { $0 != "/chat" }.isEmpty, "\(page) shows the reader forms that post: \(controls)")
        }

        // An action posted anyway (a form the page did not offer, with the session's CSRF
        // token): refused with a page saying why and leading back to where it came from.
        try browser.navigate(to: base + "/processes/trades")
        try browser.wait("the process page") { try browser.find("main h1") != nil }
        _ = try browser.execute("""
            const csrf = document.cookie.split("; ").find(c => c.startsWith("agent_csrf=")).slice(11);
            const form = document.createElement("form");
            form.method = "post"; form.action = "/processes/trades";
            for (const [name, value] of [["csrf", csrf], ["action", "stop"]]) {
              const input = document.createElement("input"); input.type = "hidden"; input.name = name; input.value = value; form.appendChild(input);
            }
            document.body.appendChild(form); form.submit();
            """)
        try browser.wait("the refusal page") { try browser.find("#refused") != nil }
        #expect(try browser.text("#refused").contains("rita has the read role"))
        #expect(try browser.execute("return document.getElementById('refused-back').getAttribute('href')") as? String == "/processes/trades")
        #expect(try browser.execute("return document.contentType") as? String == "text/html")
        try browser.click(try browser.element("#refused-back"))
        try browser.wait("back on the process page") { try browser.currentURL.hasSuffix("/processes/trades") }
        // The process was not stopped.
        let processes = try curl("GET", base + "/api/status", headers: admin).json?["processes"] as? [[String: Any]] ?? []
        #expect(processes.first { $0["name"] as? String == "trades" }?["state"] as? String == "running", "\(processes)")
    }
}
