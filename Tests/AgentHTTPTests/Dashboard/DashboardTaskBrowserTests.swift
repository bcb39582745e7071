import AgentTestSupport
import Foundation
import Testing

/// The dashboard's tasks pages in a real browser (Chromium over WebDriver) against a real
/// agent: a run started from the page is followed on its page until it succeeded, with its
/// output; a queued run an hour away is cancelled from its page.
@Suite(.ownThreads, .serialized) struct DashboardTaskBrowserTests {
    static let settings = #"""
    {
      "enabled_modules": [],
      "http": {"listen": "127.0.0.1:0", "users": {"alice": {"password_hash": "HASH"}}},
      "processes": {},
      "tasks": {
        "greet": {"type": "command", "command": ["/bin/sh", "-c", "sleep 0.5; echo hello >&2; cat"], "description": "echoes its input"},
        "later": {"type": "command", "command": ["/bin/true"], "description": "runs later"}
      }
    }
    """#

    @Test(.enabled(if: WebDriver.unavailableReason == nil, "needs a browser: \(WebDriver.unavailableReason ?? "")"))
    func aRunStartedFromThePageSucceedsWithItsOutputAndAQueuedRunIsCancelled() throws {
        let login = try DashboardLogin(settings: Self.settings, page: "/tasks", showing: "#tasks", width: 1000, height: 700)
        defer { login.close() }
        let (agent, browser, base) = (login.agent, login.browser, login.base)
        #expect(try browser.text("tr[data-task=\"greet\"]").contains("echoes its input"))

        // Run "greet" with an input from its form: the browser lands on the run's page, whose
        // status follows the run (queued or running first) until it succeeded.
        try browser.type(#"{"word": "bonjour"}"#, into: try browser.element("tr[data-task=\"greet\"] input[name=input]"))
        try browser.click(try browser.element("tr[data-task=\"greet\"] button"))
        try browser.wait("the run's page") { try browser.find("#run-status") != nil }
        let runURL = try browser.currentURL
        #expect(runURL.contains("/runs/"), "\(runURL)")
        try browser.wait("the run shown succeeded", timeout: 30) { try browser.text("#run-status") == "succeeded" }
        try browser.wait("the run's output") { try browser.find("#run-output") != nil }
        #expect(try browser.text("#run-output").contains("bonjour"))
        #expect(try browser.text("#run-stderr").contains("hello"))
        let id = String(runURL.split(separator: "/").last ?? "")

        // The tasks page lists it as succeeded.
        try browser.navigate(to: base + "/tasks")
        try browser.wait("the run in the list") { try browser.text("tr[data-run=\"\(id)\"] [data-field=status]") == "succeeded" }

        // A run an hour away, queued from the command line, cancelled from its page.
        let queued = try runProgram("agent-control", ["task", "run", "later", "--at", "1h", "--settings", agent.settingsFile])
        #expect(queued.status == 0, "\(queued.stderr)")
        let later = queued.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try browser.navigate(to: base + "/runs/" + later)
        #expect(try browser.text("#run-status") == "queued")
        try browser.click(try browser.element("button[value=cancel]"))
        try browser.wait("the run shown cancelled") { try browser.text("#run-status") == "cancelled" }
        try browser.wait("the cancel button gone") { try browser.find("button[value=cancel]") == nil }
        let shown = try runProgram("agent-control", ["task", "show", later, "--settings", agent.settingsFile])
        #expect(shown.stdout.contains("status: cancelled"), "\(shown.stdout)")
    }
}
