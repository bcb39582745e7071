import AgentTestSupport
import Foundation
import Testing

/// The dashboard's run page shows every attempt and which executor and agent ran the run; the
/// processes page says what its event counts are (issue 36 item 4), against a real agent.
@Suite(.ownThreads) struct DashboardRunAttemptsTests {
    static let tasks = #"""
        {"flaky": {"type": "command", "shell": true, "retries": {"max": 2, "initial_delay": 0.1, "multiplier": 1, "max_delay": 1},
                   "command": "if [ \"$AGENT_TASK_ATTEMPT\" = 1 ]; then echo 'first <b>boom</b>' >&2; exit 3; fi; echo done"}}
        """#
    static let processes = #"""
        {"trades": {"type": "trade_feed", "pairs": ["A/B"], "interval": 0.05},
         "crunch": {"type": "executor", "tasks": {"flaky": {}}}}
        """#

    @Test func theRunPageListsEachAttemptWithItsExecutorAndAgent() throws {
        let directory = TestPaths.temporaryDirectory("dashboard-attempts")
        let agent = try APIAgent(http: try HTTPSession.users(), processes: Self.processes, tasks: Self.tasks, directory: directory)
        let (cookie, _, _) = try HTTPSession.login(agent)
        let admin = APIAgent.bearer(APIAgent.adminToken).merging(HTTPSession.json) { $1 }
        let ran = try agent.request("POST", "/api/tasks/flaky/run", headers: admin, body: #"{"wait": true}"#)
        let run = ran.json?["run"] as? [String: Any]
        #expect(run?["status"] as? String == "succeeded", "\(ran.description)")
        let id = try #require(run?["id"] as? String)

        let page = try agent.request("GET", "/runs/\(id)", headers: ["Cookie": cookie])
        #expect(page.status == 200, "\(page.description)")
        #expect(page.body.contains(#"<table id="attempts""#), "\(page.body)")
        #expect(page.body.components(separatedBy: "<tr data-attempt=").count == 3, "two attempt rows: \(page.body)")
        #expect(page.body.contains("exit 3") && page.body.contains("first &lt;b&gt;boom&lt;/b&gt;"), "the first attempt's exit and stderr, escaped: \(page.body)")
        #expect(page.body.contains("<dt>Executor</dt><dd>crunch</dd>"), "\(page.body)")
        #expect(page.body.contains("<dt>Agent</dt><dd>\(URL(fileURLWithPath: directory).lastPathComponent)</dd>"), "\(page.body)")
    }

    @Test func theProcessesPageSaysWhichEventsItCountsEmittedReceivedDropped() throws {
        let agent = try APIAgent(http: try HTTPSession.users(), processes: Self.processes, tasks: Self.tasks)
        let (cookie, _, _) = try HTTPSession.login(agent)
        var page = try agent.request("GET", "/", headers: ["Cookie": cookie])
        #expect(page.status == 200, "\(page.description)")
        #expect(!page.body.contains("Events in"), "\(page.body)")
        for header in [">Emitted</th>", ">Received</th>", ">Dropped</th>"] { #expect(page.body.contains(header), "\(header): \(page.body)") }
        // The datasource's events are counted as emitted, never as received.
        func cell(_ field: String) -> Int? {
            guard let row = page.body.components(separatedBy: #"<tr data-process="trades">"#).dropFirst().first,
                  let after = row.components(separatedBy: #"data-field="\#(field)">"#).dropFirst().first else { return nil }
            return Int(after.prefix { $0.isNumber })
        }
        let deadline = Date().addingTimeInterval(60)
        while (cell("emitted") ?? 0) == 0, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.2)
            page = try agent.request("GET", "/", headers: ["Cookie": cookie])
        }
        #expect((cell("emitted") ?? 0) > 0, "\(page.body)")
        #expect(cell("received") == 0, "\(page.body)")
        #expect(cell("dropped") == 0, "\(page.body)")
    }
}
