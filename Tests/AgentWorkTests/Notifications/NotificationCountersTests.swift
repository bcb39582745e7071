import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// What became of the task notifications, as an operator reads it from a real agent:
/// `agent-control status` (table and JSON), `agent-control diagnostics` and `GET /metrics`.
@Suite(.ownThreads, .serialized)
struct NotificationCountersTests {
    @Test func undeliveredEmailsAndPublishedRecordsAreCountedInStatusDiagnosticsAndMetrics() throws {
        // Nobody listens there: the email fails (no retry) and is counted; the record reaches the file output.
        let port = try SMTPTestServer.closedPort()
        let directory = TestPaths.temporaryDirectory("notify-counters")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let settings = #"""
            {"enabled_modules": [], "processes": {},
             "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"]},
             "outputs": [{"type": "file", "name": "alerts", "path": "alerts.jsonl", "kinds": ["event"]}],
             "notifications": {"email": {"url": "smtp://127.0.0.1:\#(port)", "starttls": "never", "from": "agent@example.com",
                                         "to": "ops@example.com", "max_retries": 0}},
             "tasks": {"fails": {"type": "command", "command": ["/bin/sh", "-c", "exit 3"], "notify": {"outputs": ["alerts"]}}}}
            """#
        let run = try AgentRun(settings: settings, arguments: ["--no-build", "--json"], environment: ["AGENT_API_TOKEN": TaskAgent.token],
                               directory: directory)
        defer { _ = run.stop() }
        let line = run.waitForLine(onStderr: true) { $0.contains("http: listening on http://127.0.0.1:") }
        let httpPort = try #require(line?.components(separatedBy: "http://127.0.0.1:").last.flatMap { Int($0.prefix { $0.isNumber }) },
                                    "\(run.transcript)")

        // Before any run: the families are there, at zero, and status has no line for them.
        let before = try PrometheusExposition(try HTTPProbe.get("/metrics", port: httpPort, token: TaskAgent.token).body)
        #expect(before.value("agent_task_notifications_total", ["channel": "email", "result": "failed"]) == 0)
        let quiet = try runProgram("agent-control", ["status", "--settings", run.settingsFile], timeout: 60)
        #expect(!quiet.stdout.contains("task notifications"), "\(quiet.stdout)")

        let result = try TaskAgent.control(run, ["run", "fails", "--wait"])
        #expect(result.status != 0, "\(result.stdout) \(result.stderr)")

        var status = JSONValue.null
        let counted = OutputTestSupport.waitUntil {
            let answer = try? runProgram("agent-control", ["status", "--json", "--settings", run.settingsFile], timeout: 60)
            status = (try? JSONValue.parse(answer?.stdout ?? "")) ?? .null
            return status["notifications"]?["emails_failed"] == 1 && status["notifications"]?["queued"] == 0
        }
        #expect(counted, "\(status.serialized())")
        #expect(status["notifications"]?["records_published"] == 1)
        #expect(status["notifications"]?["emails_sent"] == 0)
        #expect(status["notifications"]?["last_error"]?.stringValue?.isEmpty == false)

        let table = try runProgram("agent-control", ["status", "--settings", run.settingsFile], timeout: 60)
        #expect(table.stdout.contains("task notifications: emails sent 0, failed 1, dropped 0, queued 0; records 1"), "\(table.stdout)")

        let diagnostics = try runProgram("agent-control", ["diagnostics", "--settings", run.settingsFile], timeout: 60)
        #expect(diagnostics.stdout.contains("notifications\n"), "\(diagnostics.stdout)")
        #expect(diagnostics.stdout.contains("  emails_failed: 1"), "\(diagnostics.stdout)")
        #expect(diagnostics.stdout.contains("  records_published: 1"), "\(diagnostics.stdout)")

        let metrics = try PrometheusExposition(try HTTPProbe.get("/metrics", port: httpPort, token: TaskAgent.token).body)
        #expect(metrics.value("agent_task_notifications_total", ["channel": "email", "result": "failed"]) == 1)
        #expect(metrics.value("agent_task_notifications_total", ["channel": "email", "result": "sent"]) == 0)
        #expect(metrics.value("agent_task_notifications_total", ["channel": "output", "result": "published"]) == 1)
        #expect(metrics.value("agent_task_notification_failed_attempts_total", [:]) == 1)
        #expect(metrics.value("agent_task_notifications_queued", [:]) == 0)
        #expect(metrics.families["agent_task_notifications_total"]?.type == "counter")
        // The task's runs are counted next to them.
        #expect(metrics.value("agent_task_attempts_total", ["task": "fails", "outcome": "failed"]) == 1)
        #expect(metrics.value("agent_task_runs_queued", ["task": "fails"]) == 0)
    }
}
