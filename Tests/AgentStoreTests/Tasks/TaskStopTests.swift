@testable import AgentStore
import AgentTestSupport
import Foundation
import JSONSchema
import Logging
import Testing

/// A clean stop of an agent while a run runs: the command is asked to end (SIGTERM, within its
/// `cancel_grace`), the run is recorded as interrupted — `retrying` in the store, no
/// notification — and the next start runs it again as its next attempt.
@Suite(.ownThreads, .serialized)
struct TaskStopTests {
    static let tasks = #"""
        "graceful": {"type": "command", "shell": true, "cancel_grace": 20, "notify": {"outputs": ["alerts"], "on": ["failure", "retry"]},
                     "command": "echo \"$AGENT_TASK_ATTEMPT\" >> attempts.txt; if [ \"$AGENT_TASK_ATTEMPT\" = 1 ]; then trap 'echo term >> terms.txt; exit 1' TERM; echo running >> terms.txt; sleep 60 & wait; fi; echo '{\"done\": true}'"}
        """#

    static func agent(directory: String) throws -> AgentRun {
        try TaskAgent.agent(tasks: tasks, store: #""outputs": [{"type": "file", "name": "alerts", "path": "alerts.jsonl", "kinds": ["event"]}],"#,
                                 directory: directory).0
    }

    static func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test func aCleanStopInterruptsARunningRunWithoutNotifyingAndTheNextStartRunsItAgain() async throws {
        let directory = TestPaths.temporaryDirectory("task-stop")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try Self.agent(directory: directory)
        let id = try TaskAgent.control(first, ["run", "graceful"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!id.isEmpty)
        #expect(OutputTestSupport.waitUntil { Self.lines(directory + "/terms.txt") == ["running"] }, "\(first.transcript)")

        // SIGTERM, as `agent-control stop` and systemd send it.
        #expect(first.stop() == 0, "\(first.transcript)")
        #expect(Self.lines(directory + "/terms.txt") == ["running", "term"], "the command was asked to end, not killed outright")

        // The store says what happened while the agent is down.
        let store = try AgentStore(path: directory + "/.agent/data/agent.sqlite", settings: StoreSettings(), logger: Logger(label: "test"))
        let runStore = try SQLiteRunStore(store: store)
        let unfinished = try await runStore.loadUnfinished()
        store.close()
        let stored = try #require(unfinished.first { $0.id == id })
        #expect(stored.status == .retrying)
        #expect(stored.attempt == 1)
        #expect(stored.error == "interrupted: the agent stopped while attempt 1 ran; it runs again at the next start")
        // Nobody was told: the operator stopped the agent, the work did not fail.
        let notified = Self.lines(directory + "/alerts.jsonl").filter { $0.contains("task.notification") }
        #expect(notified.isEmpty, "\(notified)")

        let second = try Self.agent(directory: directory)
        defer { _ = second.stop() }
        var fields: [String: String] = [:]
        _ = OutputTestSupport.waitUntil {
            fields = TaskAgent.fields((try? TaskAgent.control(second, ["show", id]).stdout) ?? "")
            return fields["status"] == "succeeded"
        }
        #expect(fields["status"] == "succeeded", "\(fields)\n\(second.transcript)")
        #expect(fields["attempt"] == "2")
        #expect(Self.lines(directory + "/attempts.txt") == ["1", "2"])
    }
}
