import AgentTestSupport
import Foundation
import GRDB
import Testing

/// The task commands through the real fronts: `agent-control task …` over the control socket
/// and `/api/tasks`, `/api/runs` over HTTP, of a real `agent-control console`.
@Suite(.ownThreads) struct TaskFrontTests {
    /// Waits (30 s at most) until the agent in `directory` committed run `id` with `status`,
    /// read from its store beside it (read-only, as its own queries read it): a test that kills
    /// the agent unwarned waits for the commit, not for a commit interval a loaded machine's
    /// fsync can outlast.
    static func waitForCommittedRun(_ id: String, status: String, in directory: String) -> Bool {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(5)
        let deadline = Date().addingTimeInterval(30)
        repeat {
            let data = try? DatabaseQueue(path: directory + "/.agent/data/agent.sqlite", configuration: configuration).read {
                try String.fetchOne($0, sql: "SELECT data FROM task_runs WHERE id = ?", arguments: [id])
            }
            let record = data.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            if record?["status"] as? String == status { return true }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        return false
    }

    @Test func runsAtALaterTimeAreListedShownAndCancelledOverHTTP() throws {
        let (agent, port) = try TaskAgent.agent()
        defer { _ = agent.stop() }
        let list = try TaskAgent.http("GET", "/api/tasks", port: port)
        #expect(list.status == 200)
        #expect((list.json["tasks"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["later", "other"])

        let queued = try TaskAgent.http("POST", "/api/tasks/later/run", port: port, body: #"{"input": {"path": "/tmp"}, "priority": "high", "at": "1h"}"#)
        #expect(queued.status == 200, "\(queued.body)")
        let run = try #require(queued.json["run"] as? [String: Any])
        let id = try #require(run["id"] as? String)
        #expect(run["status"] as? String == "queued")
        #expect(run["priority"] as? String == "high")
        #expect(run["requested_by"] as? String == "http")
        #expect(run["not_before"] != nil)

        let shown = try TaskAgent.http("GET", "/api/runs/\(id)", port: port)
        #expect((shown.json["run"] as? [String: Any])?["input"] as? [String: String] == ["path": "/tmp"])
        let runs = try TaskAgent.http("GET", "/api/runs?task=later&status=queued&limit=5", port: port)
        #expect((runs.json["runs"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [id])
        #expect(runs.json["stored"] as? Bool == true)

        let metrics = try TaskAgent.http("GET", "/api/metrics", port: port).json["families"] as? [[String: Any]] ?? []
        let queuedFamily = metrics.first { $0["name"] as? String == "agent_task_runs_queued" }
        let samples = queuedFamily?["samples"] as? [[String: Any]] ?? []
        #expect(samples.first { ($0["labels"] as? [String: String])?["task"] == "later" }?["value"] as? Double == 1, "\(samples)")
        #expect(metrics.contains { $0["name"] as? String == "agent_task_attempts_total" })
        let cancelled = try TaskAgent.http("POST", "/api/runs/\(id)/cancel", port: port)
        #expect((cancelled.json["run"] as? [String: Any])?["status"] as? String == "cancelled", "\(cancelled.body)")
        let again = try TaskAgent.http("POST", "/api/runs/\(id)/cancel", port: port)
        #expect(again.status == 409)
        #expect((again.json["error"] as? String)?.contains("already finished") == true)
    }

    @Test func badRequestsAreRefusedWithPointersOverHTTP() throws {
        let (agent, port) = try TaskAgent.agent()
        defer { _ = agent.stop() }
        let input = try TaskAgent.http("POST", "/api/tasks/later/run", port: port, body: #"{"input": {"count": "three"}}"#)
        #expect(input.status == 400)
        #expect(input.json["code"] as? String == "invalid")
        let pointers = (input.json["errors"] as? [[String: Any]])?.compactMap { $0["pointer"] as? String } ?? []
        #expect(Set(pointers) == ["/input", "/input/count"], "\(input.body)")

        let unknown = try TaskAgent.http("POST", "/api/tasks/latr/run", port: port, body: "{}")
        #expect(unknown.status == 404)
        #expect((unknown.json["error"] as? String)?.contains("did you mean \"later\"") == true)
        let priority = try TaskAgent.http("POST", "/api/tasks/other/run", port: port, body: #"{"priority": "urgent"}"#)
        #expect(priority.status == 400)
        #expect(priority.json["pointer"] as? String == "/priority")
        let at = try TaskAgent.http("POST", "/api/tasks/other/run", port: port, body: #"{"at": "tomorrow"}"#)
        #expect(at.status == 400)
        #expect(at.json["pointer"] as? String == "/at")
        let missing = try TaskAgent.http("GET", "/api/runs/no-such-run", port: port)
        #expect(missing.status == 404)
        let rerun = try TaskAgent.http("POST", "/api/runs/no-such-run/rerun", port: port)
        #expect(rerun.status == 404)
        let status = try TaskAgent.http("GET", "/api/runs?status=done", port: port)
        #expect(status.status == 400)
    }

    @Test func theCommandLineRunsListsShowsAndCancels() throws {
        let (agent, _) = try TaskAgent.agent()
        defer { _ = agent.stop() }
        let listed = try TaskAgent.control(agent, ["list"])
        #expect(listed.status == 0)
        #expect(listed.stdout.contains("later  command  queued 0, running 0  — runs later"), "\(listed.stdout)\(listed.stderr)")

        let folder = TestPaths.temporaryDirectory("input")
        try #"{"path": "/srv"}"#.write(toFile: folder + "/input.json", atomically: true, encoding: .utf8)
        let queued = try TaskAgent.control(agent, ["run", "later", "--input", "@" + folder + "/input.json", "--at", "2h", "--priority", "critical"])
        #expect(queued.status == 0, "\(queued.stderr)")
        let id = queued.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!id.isEmpty)
        let shown = try TaskAgent.control(agent, ["show", id])
        #expect(shown.stdout.contains("status: queued"))
        #expect(shown.stdout.contains("priority: critical"))
        #expect(shown.stdout.contains("requested_by: cli"))
        let runs = try TaskAgent.control(agent, ["runs", "--task", "later", "--json"])
        #expect(runs.stdout.contains(#""id":"\#(id)""#))
        let cancelled = try TaskAgent.control(agent, ["cancel", id])
        #expect(cancelled.status == 0)
        #expect(cancelled.stdout.contains("cancelled"))

        let bad = try TaskAgent.control(agent, ["run", "later", "--input", #"{"count": 1}"#])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("/input"), "\(bad.stderr)")
        let notJSON = try TaskAgent.control(agent, ["run", "later", "--input", "{nope"])
        #expect(notJSON.status == 64)
        #expect(notJSON.stderr.contains("--input is not valid JSON"))
        let unknown = try TaskAgent.control(agent, ["show", "no-such-run"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no run with id"))
        let priority = try TaskAgent.control(agent, ["run", "later", "--priority", "urgent"])
        #expect(priority.status == 64)
    }

    @Test func aReloadAppliesAChangedTasksSectionAndRefusesAnInvalidOne() throws {
        let (agent, port) = try TaskAgent.agent()
        defer { _ = agent.stop() }
        let queued = try TaskAgent.http("POST", "/api/tasks/other/run", port: port, body: #"{"at": "1h"}"#)
        let id = try #require((queued.json["run"] as? [String: Any])?["id"] as? String)
        var settings = try String(contentsOfFile: agent.settingsFile, encoding: .utf8)
        settings = settings.replacingOccurrences(of: #""other": {"type": "command", "command": ["/bin/true"], "max_concurrent": 2}"#,
                                                 with: #""fresh": {"type": "command", "command": ["/bin/echo", "hi"]}"#)
        try settings.write(toFile: agent.settingsFile, atomically: true, encoding: .utf8)
        let reloaded = try runProgram("agent-control", ["reload", "--settings", agent.settingsFile])
        #expect(reloaded.status == 0, "\(reloaded.stderr)")
        let names = (try TaskAgent.http("GET", "/api/tasks", port: port).json["tasks"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(names == ["fresh", "later"])
        let run = try TaskAgent.http("GET", "/api/runs/\(id)", port: port).json["run"] as? [String: Any]
        #expect(run?["status"] as? String == "failed")
        #expect((run?["error"] as? String)?.contains("removed from the settings") == true)

        try settings.replacingOccurrences(of: #"["/bin/echo", "hi"]"#, with: "[]").write(toFile: agent.settingsFile, atomically: true, encoding: .utf8)
        let refused = try runProgram("agent-control", ["reload", "--settings", agent.settingsFile])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("/tasks/fresh/command"), "\(refused.stderr)")
        let still = (try TaskAgent.http("GET", "/api/tasks", port: port).json["tasks"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(still == ["fresh", "later"])
    }

    @Test func theCommandLineSaysWhenTheAgentIsNotRunning() throws {
        let folder = TestPaths.temporaryDirectory("stopped")
        try #"{"enabled_modules": [], "processes": {}}"#.write(toFile: folder + "/settings.json", atomically: true, encoding: .utf8)
        let result = try runProgram("agent-control", ["task", "list", "--settings", folder + "/settings.json"])
        #expect(result.status == 3)
        #expect(result.stderr.contains("not running"))
    }

    @Test func withoutAStoreRunsAreKeptInMemoryAndTheListSaysSo() throws {
        let (agent, port) = try TaskAgent.agent(store: #""store": {"enabled": false},"#)
        defer { _ = agent.stop() }
        let queued = try TaskAgent.http("POST", "/api/tasks/later/run", port: port, body: #"{"input": {"path": "/x"}, "at": "1h"}"#)
        #expect(queued.status == 200)
        let runs = try TaskAgent.http("GET", "/api/runs", port: port)
        #expect(runs.json["stored"] as? Bool == false)
        #expect((runs.json["note"] as? String)?.contains("in memory only") == true)
        #expect((runs.json["runs"] as? [[String: Any]])?.count == 1)
        let cli = try TaskAgent.control(agent, ["runs"])
        #expect(cli.stderr.contains("in memory only"))
    }

    @Test func queuedRunsSurviveACrashOfTheAgent() throws {
        let directory = TestPaths.temporaryDirectory("crash")
        let (first, port) = try TaskAgent.agent(directory: directory)
        let queued = try TaskAgent.http("POST", "/api/tasks/later/run", port: port, body: #"{"input": {"path": "/kept"}, "at": "1h"}"#)
        let id = try #require((queued.json["run"] as? [String: Any])?["id"] as? String)
        // The store's writer commits within its commit interval; then the agent dies unwarned.
        #expect(Self.waitForCommittedRun(id, status: "queued", in: directory), "\(first.transcript)")
        _ = first.stop(signal: SIGKILL)
        let (second, secondPort) = try TaskAgent.agent(directory: directory)
        defer { _ = second.stop() }
        let shown = try TaskAgent.http("GET", "/api/runs/\(id)", port: secondPort)
        let run = try #require(shown.json["run"] as? [String: Any], "\(shown.body)")
        #expect(run["status"] as? String == "queued")
        #expect(run["input"] as? [String: String] == ["path": "/kept"])
    }
}
