import AgentTestSupport
import Foundation
import Testing

/// The dashboard in a real browser: Debian's Chromium driven over WebDriver against a real
/// agent (`agent-control console` with the HTTP front on), one browser session for every check.
@Suite(.ownThreads, .serialized) struct DashboardBrowserTests {
    static let settings = """
    {
      "enabled_modules": ["sample"],
      "http": {"listen": "127.0.0.1:0", "users": {"alice": {"password_hash": "HASH"}}},
      "processes": {
        "trades": {"type": "trade_feed", "pairs": ["X/Y"], "interval": 0.2},
        "busy": {"type": "trade_frequency", "window": 30, "threshold": 1000},
        "chat": {"type": "chatbot", "logic_adapters": ["features", "status"]}
      }
    }

    """
    static let password = "correct horse battery staple"

    /// The same settings with one bad value, on line 6 of the text.
    static let invalidSettings = """
    {
      "enabled_modules": ["sample"],
      "http": {"listen": "127.0.0.1:0", "users": {"alice": {"password_hash": "HASH"}}},
      "processes": {
        "trades": {"type": "trade_feed", "pairs": ["X/Y"], "interval": 0.2},
        "busy": {"type": "trade_frequency", "window": "thirty", "threshold": 1000},
        "chat": {"type": "chatbot", "logic_adapters": ["features", "status"]}
      }
    }
    """

    /// Starts the agent and finds the port its HTTP front listens on.
    static func startAgent(hash: String) throws -> (AgentRun, String) {
        let agent = try AgentRun(settings: settings.replacingOccurrences(of: "HASH", with: hash))
        guard let line = agent.waitForLine(onStderr: true, { $0.contains("http: listening on http://") }),
              let range = line.range(of: #"http://127\.0\.0\.1:\d+"#, options: .regularExpression) else {
            _ = agent.stop()
            throw WebDriver.Failure(description: "the HTTP front did not start\n\(agent.transcript)")
        }
        return (agent, String(line[range]))
    }

    /// Where the test run keeps its screenshots: `DASHBOARD_SCREENSHOTS` or a temporary folder
    /// (never the source tree).
    static func screenshotFolder() throws -> String {
        let folder = ProcessInfo.processInfo.environment["DASHBOARD_SCREENSHOTS"] ?? TestPaths.temporaryDirectory("screenshots")
        try TestPaths.requireOutsideSourceTree(folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test(.enabled(if: WebDriver.unavailableReason == nil, "needs a browser: \(WebDriver.unavailableReason ?? "")"))
    func theDashboardShowsStopsChatsEditsAndRefusesOtherOrigins() throws {
        let hash = try APIAgent.hash(Self.password)
        let (agent, base) = try Self.startAgent(hash: hash)
        defer { _ = agent.stop() }
        let browser = try WebDriver(width: 1000, height: 700, directory: agent.directory)
        defer { browser.quit() }
        let shots = try Self.screenshotFolder()

        // Without a session, the dashboard sends the browser to its login page; a wrong
        // password is refused there, the right one leads on to the page asked for.
        try browser.navigate(to: base + "/")
        try browser.type("alice", into: try browser.element("#login-user"))
        try browser.type("wrong", into: try browser.element("#login-password"))
        try browser.click(try browser.element("#login-form button"))
        try browser.wait("the refusal") { try browser.text("#login-error").contains("Wrong user name or password") }
        try browser.type("alice", into: try browser.element("#login-user"))
        try browser.type(Self.password, into: try browser.element("#login-password"))
        try browser.click(try browser.element("#login-form button"))
        try browser.wait("the processes page") { try browser.find("#processes") != nil }
        #expect(try browser.text("header .user").contains("alice (admin)"))

        // The processes, with their states as the server rendered them.
        try browser.wait("every process running", timeout: 60) {
            let states = try ["trades", "busy", "chat"].map { try browser.text("tr[data-process=\"\($0)\"] [data-field=state]") }
            if states != ["running", "running", "running"] { try browser.navigate(to: base + "/") }
            return states == ["running", "running", "running"]
        }
        #expect(try !browser.text("tr[data-process=\"trades\"] [data-field=pid]").isEmpty)
        try browser.screenshot(to: shots + "/dashboard-processes.png")

        // Stop one: the flash says so and its state changes.
        try browser.click(try browser.element("tr[data-process=\"trades\"] button[value=stop]"))
        try browser.wait("the stop's message") { try browser.text("#flash").contains("stop trades: ok") }
        try browser.wait("trades shown stopped") { try browser.text("tr[data-process=\"trades\"] [data-field=state]") == "stopped" }
        #expect(try browser.text("tr[data-process=\"busy\"] [data-field=state]") == "running")

        // Chat: send a message and read the answer in the conversation.
        try browser.navigate(to: base + "/chat")
        try browser.type("what is the status of the processes?", into: try browser.element("#chat-text"))
        try browser.click(try browser.element("#chat-form button"))
        try browser.wait("the bot's answer", timeout: 40) { try browser.text("#chat-history").contains("busy: running") }
        #expect(try browser.text("#chat-history .msg-user").contains("what is the status of the processes?"))
        #expect(try browser.text("#chat-history .msg-bot").contains("trades: stopped"))

        // Invalid settings: refused, nothing written, the error at its field's line.
        let before = try String(contentsOfFile: agent.settingsFile, encoding: .utf8)
        try browser.navigate(to: base + "/settings")
        let editor = try browser.element("#settings-text")
        #expect(try browser.execute("return document.getElementById('settings-text').value") as? String == before)
        try browser.clear(editor)
        try browser.type(Self.invalidSettings.replacingOccurrences(of: "HASH", with: hash), into: editor)
        try browser.click(try browser.element("#settings-form button"))
        let error = try browser.element("#settings-errors li[data-pointer=\"/processes/busy/window\"]")
        let errorText = try browser.text(of: error)
        #expect(errorText.hasPrefix("line 6 /processes/busy/window: "), "\(errorText)")
        #expect(try browser.text("#line-6 .field-error").isEmpty == false)
        #expect(try browser.text("#line-6").contains("\"window\": \"thirty\""))
        #expect(try String(contentsOfFile: agent.settingsFile, encoding: .utf8) == before)
        try browser.screenshot(to: shots + "/dashboard-settings-error.png")

        // A page of another origin (same host, another port: it can read the CSRF cookie and
        // echo it) posts a stop to the dashboard: refused, and the process runs on.
        let dashboardPort = base.split(separator: ":").last.map(String.init) ?? ""
        let attacker = try StaticPageServer(html: """
        <!doctype html><html><body>
        <form id="f" method="post" action="http://127.0.0.1:\(dashboardPort)/processes/busy">
        <input type="hidden" name="action" value="stop"><input type="hidden" name="csrf" id="t"></form>
        <script>
        var m = document.cookie.match(/(?:^|; )agent_csrf=([0-9a-f]+)/);
        document.getElementById("t").value = m ? m[1] : "";
        document.title = m ? "token copied" : "no token";
        document.getElementById("f").submit();
        </script></body></html>
        """)
        defer { attacker.stop() }
        try browser.navigate(to: "http://127.0.0.1:\(attacker.port)/")
        try browser.wait("the dashboard's answer to the forged form") { try browser.currentURL.contains(":\(dashboardPort)/") }
        let refusalText = try browser.text("body")
        #expect(refusalText.contains("cross-site request refused"), "\(refusalText)")
        try browser.navigate(to: base + "/")
        #expect(try browser.text("tr[data-process=\"busy\"] [data-field=state]") == "running")
        #expect(!agent.stderrLines.contains { $0.contains("busy") && $0.contains("stop requested") })
        print("dashboard screenshots: \(shots)")
    }
}
