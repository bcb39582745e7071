import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// The dashboard's workflow pages in a real browser (Chromium over WebDriver) against a real
/// agent: the workflows and their steps, a run started from its form, its approval shown
/// waiting with the prompt, approved from the run's page, and the run followed until it
/// succeeded, its step log showing the decision and the task step's run; a reader named as an
/// approver answers from the page too.
@Suite(.ownThreads, .serialized) struct DashboardWorkflowBrowserTests {
    static let settings = #"""
    {
      "enabled_modules": [],
      "http": {"listen": "127.0.0.1:0", "users": {"alice": {"password_hash": "HASH"}, "bob": {"password_hash": "HASH", "role": "read"}}},
      "processes": {},
      "tasks": {
        "pay": {"type": "command", "command": ["/bin/sh", "-c", "echo '{\"paid\": true}'"]}
      },
      "workflows": {
        "refund": {"description": "a refund a person approves",
                   "input": {"type": "object", "required": ["amount"], "properties": {"amount": {"type": "number"}}},
                   "steps": [{"id": "ok", "approval": {"approvers": ["alice", "bob"], "prompt": "Refund ${input:/amount} EUR?"}},
                             {"id": "pay", "task": "pay"}]}
      }
    }
    """#

    @Test(.enabled(if: WebDriver.unavailableReason == nil, "needs a browser: \(WebDriver.unavailableReason ?? "")"))
    func aRunStartedFromThePageWaitsForItsApprovalAndCompletesOnceApproved() throws {
        let login = try DashboardLogin(settings: Self.settings, page: "/workflows", showing: "#workflows", width: 1200, height: 900)
        defer { login.close() }
        let (agent, browser, base) = (login.agent, login.browser, login.base)
        let refund = #"tr[data-workflow="refund"]"#
        #expect(try browser.text(refund + #" td[data-label="Steps"]"#) == "ok → pay")
        #expect(try browser.text(refund + #" td[data-label="Description"]"#) == "a refund a person approves")

        // Start a run from the form: the browser lands on the run's page, the approval waiting.
        try browser.type(#"{"amount": 250}"#, into: try browser.element(refund + #" input[name="input"]"#))
        try browser.click(try browser.element(refund + " button"))
        try browser.wait("the run's page") { try browser.find("#workflow-run-status") != nil }
        let url = try browser.currentURL
        #expect(url.contains("/workflow-runs/"), "\(url)")
        let id = String(url.split(separator: "/").last ?? "")
        let approval = #"#workflow-steps tr[data-step="ok"]"#
        try browser.wait("the approval waiting") { try browser.text("#workflow-run-status") == "waiting" && browser.find(approval) != nil }
        #expect(try browser.text(approval + #" td[data-label="Status"]"#) == "waiting")
        #expect(try browser.text(approval + " .prompt").contains("Refund 250 EUR?"))
        #expect(try browser.find(#"#workflow-steps tr[data-step="pay"]"#) == nil)
        // The agent has it waiting too (not only the page).
        let shown = try runProgram("agent-control", ["workflow", "show", id, "--json", "--settings", agent.settingsFile])
        #expect(try JSONValue.parse(Data(shown.stdout.utf8))["run"]?["status"] == "waiting", "\(shown.stdout)\(shown.stderr)")

        // Approve with a comment: the page follows the run until it succeeded.
        try browser.type("checked the photos", into: try browser.element(approval + #" input[name="comment"]"#))
        try browser.click(try browser.element(approval + #" button[value="approve"]"#))
        try browser.wait("the run shown succeeded", timeout: 30) { try browser.text("#workflow-run-status") == "succeeded" }
        #expect(try browser.text(approval + #" td[data-label="Status"]"#) == "succeeded")
        #expect(try browser.text(approval + " .decision") == "approved by alice: checked the photos")
        #expect(try browser.find(approval + " form") == nil, "no approve form once decided")
        let pay = #"#workflow-steps tr[data-step="pay"]"#
        #expect(try browser.text(pay + #" td[data-label="Status"]"#) == "succeeded")
        #expect(try browser.text(pay + #" td[data-label="Result"]"#).contains(#"{"paid":true}"#))
        #expect(try browser.text(pay + #" td[data-label="At"]"#).hasPrefix("+"))

        // The list shows the run, succeeded; its task step's run page is a link away.
        try browser.navigate(to: base + "/workflows")
        let row = "#workflow-runs tr[data-run=\"\(id)\"]"
        try browser.wait("the run in the list") { try browser.find(row) != nil }
        #expect(try browser.text(row + #" td[data-label="Status"]"#) == "succeeded")
        try browser.click(try browser.element(row + " a"))
        try browser.wait("the run's page again") { try browser.currentURL.hasSuffix("/workflow-runs/" + id) }
        try browser.click(try browser.element(pay + " a"))
        try browser.wait("the task run's page") { try browser.find("#run-status") != nil }
        #expect(try browser.text("#run-status") == "succeeded")

        // bob has the read role but is an approver: he may reject from the page (he has no start form).
        let second = try runProgram("agent-control", ["workflow", "run", "refund", "--input", #"{"amount": 9000}"#, "--settings", agent.settingsFile])
        let secondID = second.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        try browser.click(try browser.element(".logout"))
        // The logout's own navigation first (it ends on the login page at "/"): navigating
        // before it ended, a loaded machine finished the logout after, and bob logged in at "/".
        try browser.wait("the logout") { try browser.find("#login-user") != nil }
        try browser.navigate(to: base + "/workflow-runs/" + secondID)
        try browser.type("bob", into: try browser.element("#login-user"))
        try browser.type(DashboardBrowserTests.password, into: try browser.element("#login-password"))
        try browser.click(try browser.element("#login-form button"))
        try browser.wait("the approval waiting for bob") { try browser.find(approval + " form") != nil }
        try browser.type("too much", into: try browser.element(approval + #" input[name="comment"]"#))
        try browser.click(try browser.element(approval + #" button[value="reject"]"#))
        try browser.wait("the run shown failed", timeout: 30) { try browser.text("#workflow-run-status") == "failed" }
        #expect(try browser.text(approval + " .decision") == "rejected by bob: too much")
        try browser.navigate(to: base + "/workflows")
        #expect(try browser.find(refund + " form") == nil, "a reader has no start form")
    }
}
