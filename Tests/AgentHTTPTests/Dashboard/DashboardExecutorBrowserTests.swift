import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// The dashboard's executors page in a real browser (Chromium over WebDriver) against a real
/// agent: two executor replicas with their state (one busy with a run, one online), one
/// drained from its form and shown draining (and the agent has it drained), then resumed. (A
/// replica's name, `pool#2`, goes in the form's path as `pool%232`.)
@Suite(.ownThreads, .serialized) struct DashboardExecutorBrowserTests {
    static let settings = #"""
    {
      "enabled_modules": [],
      "http": {"listen": "127.0.0.1:0", "users": {"alice": {"password_hash": "HASH", "role": "admin"}}},
      "processes": {"pool": {"type": "executor", "replicas": 2, "max_concurrent": 1, "labels": {"zone": "a"}, "tasks": {"slow": {}}}},
      "tasks": {"slow": {"type": "command", "command": ["/bin/sleep", "30"], "max_concurrent": 2}}
    }
    """#

    /// The agent's own view of `name`'s state (`executor list --json`).
    static func state(of name: String, _ agent: AgentRun) throws -> String? {
        let listed = try runProgram("agent-control", ["executor", "list", "--json", "--settings", agent.settingsFile])
        let answer = try? JSONValue.parse(Data(listed.stdout.utf8))
        return answer?["executors"]?.arrayValue?.first { $0["name"]?.stringValue == name }?["state"]?.stringValue
    }

    @Test(.enabled(if: WebDriver.unavailableReason == nil, "needs a browser: \(WebDriver.unavailableReason ?? "")"))
    func theExecutorsShowTheirStateAndOneIsDrainedAndResumedFromItsForm() throws {
        let login = try DashboardLogin(settings: Self.settings, page: "/executors", showing: "#executors")
        defer { login.close() }
        let (agent, browser, base) = (login.agent, login.browser, login.base)
        // One run keeps one replica busy.
        let queued = try runProgram("agent-control", ["task", "run", "slow", "--settings", agent.settingsFile])
        #expect(queued.status == 0, "\(queued.stderr)")

        let first = #"tr[data-executor="pool#1"]"#, second = #"tr[data-executor="pool#2"]"#
        // The run went to one of them (best_fit: ties to pool#1, the first declared).
        var states: [String] = []
        try browser.wait("one replica busy, the other online") {
            try browser.navigate(to: base + "/executors")
            states = [try browser.text(first + #" td[data-label="State"]"#), try browser.text(second + #" td[data-label="State"]"#)]
            return states.sorted() == ["busy", "online"]
        }
        let busy = states[0] == "busy" ? first : second
        let online = states[0] == "busy" ? second : first
        let onlineName = online == first ? "pool#1" : "pool#2"
        #expect(try browser.text(busy + #" td[data-label="Running"]"#) == "1/1")
        #expect(try browser.text(online + #" td[data-label="Running"]"#) == "0/1")
        #expect(try browser.text(online + #" td[data-label="Tasks"]"#) == "slow")
        #expect(try browser.text(online + #" td[data-label="Labels"]"#) == "zone=a")
        #expect(try browser.find(online + #" button[value="resume"]"#) == nil)

        // Drain the online one from its form: shown draining, offered Resume; the agent has it so.
        try browser.click(try browser.element(online + #" button[value="drain"]"#))
        try browser.wait("\(onlineName) shown draining") { try browser.text(online + #" td[data-label="State"]"#) == "draining" }
        #expect(try browser.text("#flash") == "\(onlineName) draining")
        #expect(try browser.find(online + #" button[value="resume"]"#) != nil)
        #expect(try browser.find(online + #" button[value="drain"]"#) == nil)
        #expect(try Self.state(of: onlineName, agent) == "draining")
        #expect(try browser.text(busy + #" td[data-label="State"]"#) == "busy")

        // Resume it: online again, offered Drain.
        try browser.click(try browser.element(online + #" button[value="resume"]"#))
        try browser.wait("\(onlineName) shown online") { try browser.text(online + #" td[data-label="State"]"#) == "online" }
        #expect(try browser.text("#flash") == "\(onlineName) resumed")
        #expect(try browser.find(online + #" button[value="drain"]"#) != nil)
        #expect(try Self.state(of: onlineName, agent) == "online")
    }
}
