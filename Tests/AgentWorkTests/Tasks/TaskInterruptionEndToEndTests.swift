import AgentTestSupport
@testable import AgentWork
import Foundation
import GRDB
import Testing

/// Issue 34 item 7: the agent killed with SIGKILL while a run runs, again and again, started
/// again each time — the real binaries, the real SQLite store. The run is carried out until one
/// attempt completes, its interruptions counted and never against its retry policy; past the
/// task's `max_interruptions` it ends `abandoned`.
@Suite(.ownThreads) struct TaskInterruptionEndToEndTests {
    /// A command that records its pid per attempt, then sleeps — unless the test wrote
    /// `finish-now` in the agent's folder: then it ends at once. No retry policy.
    static func tasks(maxInterruptions: Int? = nil) -> String {
        let bound = maxInterruptions.map { #", "max_interruptions": \#($0)"# } ?? ""
        return #"""
            "crashy": {"type": "command", "shell": true\#(bound),
                       "command": "echo $$ > attempt-$AGENT_TASK_ATTEMPT.pid; if [ -e finish-now ]; then echo '{\"finished\": true}'; else exec sleep 30; fi"}
            """#
    }

    /// Deadlines for a loaded 2-core machine.
    static let patience = 90.0

    /// The run as `task show --json` prints it (nil when the agent did not answer).
    static func shown(_ agent: AgentRun, _ id: String) -> [String: Any]? {
        guard let result = try? TaskAgent.control(agent, ["show", id, "--json"]), result.status == 0 else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any]
    }

    /// Waits until `condition` holds for the run as the agent shows it; the last seen.
    static func waitForRun(_ agent: AgentRun, _ id: String, until condition: ([String: Any]) -> Bool) -> [String: Any]? {
        let deadline = Date().addingTimeInterval(patience)
        var last: [String: Any]?
        repeat {
            if let run = shown(agent, id) {
                last = run
                if condition(run) { return run }
            }
            Thread.sleep(forTimeInterval: 0.2)
        } while Date() < deadline
        return last
    }

    /// The run's record in the agent's SQLite store (read-only, as committed).
    static func committed(_ id: String, in directory: String) -> [String: Any]? {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(5)
        let data = try? DatabaseQueue(path: directory + "/.agent/data/agent.sqlite", configuration: configuration).read {
            try String.fetchOne($0, sql: "SELECT data FROM task_runs WHERE id = ?", arguments: [id])
        }
        return data.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// The pid attempt `attempt` wrote once its command started (nil until it did).
    static func pid(of attempt: Int, in directory: String) -> Int32? {
        let text = try? String(contentsOfFile: directory + "/attempt-\(attempt).pid", encoding: .utf8)
        return text.flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Kills the agent with SIGKILL once attempt `attempt` runs its command and the store has
    /// committed it running; returns the command's pid.
    static func killWhileRunning(_ agent: AgentRun, run id: String, attempt: Int, directory: String) throws -> Int32 {
        let deadline = Date().addingTimeInterval(patience)
        var pid: Int32?
        var record: [String: Any]?
        repeat {
            Thread.sleep(forTimeInterval: 0.1)
            pid = Self.pid(of: attempt, in: directory)
            record = pid == nil ? nil : committed(id, in: directory)
        } while !(record?["status"] as? String == "running" && record?["attempt"] as? Int == attempt) && Date() < deadline
        #expect(record?["status"] as? String == "running", "attempt \(attempt) was not committed running: \(record ?? [:])\n\(agent.transcript)")
        #expect(record?["attempt"] as? Int == attempt)
        #expect(agent.stop(signal: SIGKILL) != nil, "the agent did not die of SIGKILL")
        return try #require(pid, "attempt \(attempt) never started its command")
    }

    /// Whether `pid` (a command of a killed agent) is gone within the deadline: dead or a
    /// zombie (PID 1 does not reap here).
    static func isGone(_ pid: Int32) -> Bool {
        let deadline = Date().addingTimeInterval(patience)
        while AgentRun.isAlive(pid), Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        return !AgentRun.isAlive(pid)
    }

    @Test func aRunKilledThreeTimesWithoutARetryPolicyIsCarriedOutOnTheFourthLife() throws {
        let directory = TestPaths.temporaryDirectory("task-kill-cycles")
        var (agent, _) = try TaskAgent.agent(tasks: Self.tasks(), directory: directory)
        let id = try TaskAgent.control(agent, ["run", "crashy"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        for attempt in 1...3 {
            let pid = try Self.killWhileRunning(agent, run: id, attempt: attempt, directory: directory)
            // The last life finds the way out.
            if attempt == 3 { try Data().write(to: URL(fileURLWithPath: directory + "/finish-now")) }
            (agent, _) = try TaskAgent.agent(tasks: Self.tasks(), directory: directory)
            #expect(Self.isGone(pid), "the command of the killed life (pid \(pid)) still runs beside the next")
        }
        defer { _ = agent.stop() }
        let run = Self.waitForRun(agent, id) { ($0["status"] as? String).flatMap(TaskRun.Status.init(rawValue:))?.isFinished == true }
        #expect(run?["status"] as? String == "succeeded", "\(run ?? [:])\n\(agent.transcript)")
        #expect(run?["attempt"] as? Int == 4, "every attempt begun is counted")
        #expect(run?["interruptions"] as? Int == 3, "three of them interrupted")
        #expect((run?["output"] as? [String: Any])?["finished"] as? Bool == true)
        #expect(Self.committed(id, in: directory)?["interruptions"] as? Int == 3, "kept in the store")
    }

    @Test func pastMaxInterruptionsTheRunEndsAbandonedNotFailed() throws {
        let directory = TestPaths.temporaryDirectory("task-kill-abandon")
        let tasks = Self.tasks(maxInterruptions: 1)
        var (agent, _) = try TaskAgent.agent(tasks: tasks, directory: directory)
        let id = try TaskAgent.control(agent, ["run", "crashy"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        for attempt in 1...2 {
            let pid = try Self.killWhileRunning(agent, run: id, attempt: attempt, directory: directory)
            (agent, _) = try TaskAgent.agent(tasks: tasks, directory: directory)
            #expect(Self.isGone(pid), "the command of the killed life (pid \(pid)) still runs beside the next")
        }
        defer { _ = agent.stop() }
        let run = Self.waitForRun(agent, id) { ($0["status"] as? String).flatMap(TaskRun.Status.init(rawValue:))?.isFinished == true }
        #expect(run?["status"] as? String == "abandoned", "\(run ?? [:])\n\(agent.transcript)")
        #expect(run?["attempt"] as? Int == 2)
        #expect(run?["interruptions"] as? Int == 2)
        let error = run?["error"] as? String ?? ""
        #expect(error.contains("interrupted 2 times") && error.contains("max_interruptions (1)") && error.contains("tasks.crashy"), "\(error)")
        #expect(Self.pid(of: 3, in: directory) == nil, "no third attempt")
        let listed = try TaskAgent.control(agent, ["runs", "--status", "abandoned"])
        #expect(listed.stdout.contains(id), "\(listed.stdout)\(listed.stderr)")
    }
}
