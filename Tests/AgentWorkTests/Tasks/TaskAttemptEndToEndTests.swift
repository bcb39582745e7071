import AgentTestSupport
import Foundation
import Testing

/// Every attempt of a run a record of its own (issue 36 item 4), through the real binaries:
/// `agent-control task show` (human, `--json`, and from the store once the agent stopped) and
/// `GET /api/task-runs/{id}`, on a real SQLite file.
@Suite(.ownThreads) struct TaskAttemptEndToEndTests {
    /// Fails twice, each time with its own stderr, stdout and exit status, then succeeds; on
    /// declared executors (a retry avoids the executor of the attempt before).
    static let tasks = #"""
        "flaky": {"type": "command", "shell": true, "retries": {"max": 3, "initial_delay": 0.1, "multiplier": 1, "max_delay": 1},
                  "command": "echo \"out of attempt $AGENT_TASK_ATTEMPT\"; case \"$AGENT_TASK_ATTEMPT\" in 1) echo 'first: disk full' >&2; exit 3;; 2) echo 'second: no route to db' >&2; exit 4;; esac; echo 'third: fine' >&2"}
        """#
    static let processes = #"{"crunch": {"type": "executor", "replicas": 2, "max_concurrent": 1, "tasks": {"flaky": {}}}}"#

    static func json(_ text: String) -> [String: Any] {
        ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]) ?? [:]
    }

    /// The three attempts as `task show --json` and the API give them.
    static func checkThreeAttempts(_ attempts: [[String: Any]], agentName: String, _ context: String) {
        #expect(attempts.map { $0["attempt"] as? Int } == [1, 2, 3], "\(context)")
        guard attempts.count == 3 else { return }
        #expect(attempts.map { $0["status"] as? String } == ["failed", "failed", "succeeded"], "\(context)")
        #expect(attempts.map { $0["exit_code"] as? Int } == [3, 4, 0], "\(context)")
        let errors = attempts.map { $0["error"] as? String ?? "" }
        #expect(errors[0].contains("exited with status 3") && errors[0].contains("first: disk full"), "\(context)")
        #expect(errors[1].contains("exited with status 4") && errors[1].contains("second: no route to db"), "\(context)")
        #expect(attempts[2]["error"] == nil, "\(context)")
        #expect(attempts.map { $0["stderr_tail"] as? String } == ["first: disk full", "second: no route to db", "third: fine"], "\(context)")
        #expect(attempts.map { $0["stdout_tail"] as? String } == ["out of attempt 1", "out of attempt 2", "out of attempt 3"], "\(context)")
        let executors = attempts.compactMap { $0["executor"] as? String }
        #expect(executors.count == 3 && executors.allSatisfy { $0.hasPrefix("crunch#") }, "\(context)")
        if executors.count == 3 { #expect(executors[0] != executors[1] && executors[1] != executors[2], "a retry avoids the executor before: \(context)") }
        #expect(attempts.allSatisfy { $0["agent"] as? String == agentName }, "\(context)")
        #expect(attempts.allSatisfy { $0["started_at"] is String && $0["ended_at"] is String && $0["from_run_record"] == nil }, "\(context)")
    }

    @Test func aRunThatFailedTwiceThenSucceededShowsThreeAttemptsEachWithItsOwnErrorTailsAndExecutor() throws {
        let directory = TestPaths.temporaryDirectory("attempts")
        let (agent, port) = try TaskAgent.agent(tasks: Self.tasks, processes: Self.processes, directory: directory)
        defer {
            _ = agent.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
        let agentName = URL(fileURLWithPath: directory).lastPathComponent
        let ran = try TaskAgent.control(agent, ["run", "flaky", "--wait", "--json"])
        #expect(ran.status == 0, "\(ran.stdout)\(ran.stderr)")
        let id = try #require(Self.json(ran.stdout)["id"] as? String, "\(ran.stdout)")

        let shown = try TaskAgent.control(agent, ["show", id, "--json"])
        let run = Self.json(shown.stdout)
        #expect(run["status"] as? String == "succeeded")
        Self.checkThreeAttempts(run["attempts"] as? [[String: Any]] ?? [], agentName: agentName, "task show --json: \(shown.stdout)")

        let human = try TaskAgent.control(agent, ["show", id]).stdout
        #expect(human.contains("attempts: 3"), "\(human)")
        for expected in ["#1  failed", "exit 3", "first: disk full", "#2  failed", "exit 4", "second: no route to db", "#3  succeeded",
                         "third: fine", "out of attempt 2", "executor crunch#", "agent \(agentName)"] {
            #expect(human.contains(expected), "\(expected) in:\n\(human)")
        }

        let answer = try TaskAgent.http("GET", "/api/task-runs/\(id)", port: port)
        #expect(answer.status == 200, "\(answer.body)")
        #expect((answer.json["run"] as? [String: Any])?["id"] as? String == id)
        Self.checkThreeAttempts(answer.json["attempts"] as? [[String: Any]] ?? [], agentName: agentName, "GET /api/task-runs: \(answer.body)")
        let missing = try TaskAgent.http("GET", "/api/task-runs/no-such-run", port: port)
        #expect(missing.status == 404, "\(missing.body)")

        // Once the agent stopped, from its store: the same attempts.
        #expect(agent.stop() != nil)
        let stored = try TaskAgent.control(agent, ["show", id, "--json"])
        #expect(stored.status == 0, "\(stored.stderr)")
        Self.checkThreeAttempts(Self.json(stored.stdout)["attempts"] as? [[String: Any]] ?? [], agentName: agentName, "from the store: \(stored.stdout)")
    }
}
