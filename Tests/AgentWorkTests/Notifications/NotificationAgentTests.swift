import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// A real agent (`agent-control console`) whose task fails: the email reaches aiosmtpd and
/// the JSON record the file output, and the run's result is the run's own.
@Suite(.ownThreads, .serialized,
       .enabled(if: SMTPTestServer.unavailableReason == nil, "needs an SMTP server: \(SMTPTestServer.unavailableReason ?? "")"))
struct NotificationAgentTests {
    @Test func aFailedRunOfARealAgentIsMailedAndWrittenToTheOutput() throws {
        let server = try SMTPTestServer(mode: .plain)
        let directory = TestPaths.temporaryDirectory("notify-agent")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let tasks = #"""
            "fails": {"type": "command", "command": ["/bin/sh", "-c", "echo disk full >&2; exit 3"],
                      "notify": {"email": {"to": "dba@example.com"}, "outputs": ["alerts"]}}
            """#
        let settings = #"""
            {"enabled_modules": [], "processes": {},
             "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"]},
             "outputs": [{"type": "file", "name": "alerts", "path": "alerts.jsonl", "kinds": ["event"]}],
             "notifications": {"email": {"url": "smtp://127.0.0.1:\#(server.port)", "starttls": "never", "from": "agent@example.com",
                                         "to": "ops@example.com", "max_retries": 0}},
             "tasks": {\#(tasks)}}
            """#
        let run = try AgentRun(settings: settings, arguments: ["--no-build", "--json"], environment: ["AGENT_API_TOKEN": TaskAgent.token],
                               directory: directory)
        defer { _ = run.stop() }
        #expect(run.waitForLine(onStderr: true) { $0.contains("http: listening on") } != nil, "\(run.transcript)")
        let result = try TaskAgent.control(run, ["run", "fails", "--wait"])
        #expect(result.status != 0, "a failed run is a failed run: \(result.stdout) \(result.stderr)")

        let message = try #require(server.waitForMessages(1).first)
        #expect(message["rcpt_tos"] as? [String] == ["dba@example.com"])
        #expect((message["subject"] as? String)?.contains("task fails failed") == true)
        let alerts = URL(fileURLWithPath: directory).appendingPathComponent("alerts.jsonl").path
        var records: [JSONValue] = []
        _ = OutputTestSupport.waitUntil {
            records = ((try? String(contentsOfFile: alerts, encoding: .utf8)) ?? "").split(separator: "\n")
                .compactMap { try? JSONValue.parse(String($0)) }.filter { $0["type"] == "task.notification" }
            return !records.isEmpty
        }
        try #require(records.count == 1)
        #expect(records[0]["payload"]?["task"] == "fails")
        #expect(records[0]["payload"]?["event"] == "failure")
        #expect(records[0]["payload"]?["status"] == "failed")
    }
}
