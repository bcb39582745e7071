import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// The commands that read history — `task runs`, `task show`, `workflow runs`, `workflow
/// show`, `schedule history` — answer from the agent's store when it is not running, as
/// `events` and `history` do: the same lines the running agent gave, and a note saying where
/// they come from.
@Suite(.ownThreads) struct StoredHistoryTests {
    static let tasks = #"""
        "hello": {"type": "command", "command": ["/bin/echo", "hi"]},
        "tock": {"type": "command", "command": ["/bin/true"]}
        """#
    static let workflows = #"""
        "greet": {"steps": [{"id": "say", "task": "hello"}]}
        """#
    static let schedules = #"""
        "tick": {"every": 1, "run": {"task": "tock"}}
        """#

    private func control(_ agent: WorkflowAgent, _ arguments: [String]) throws -> ProgramResult {
        try runProgram("agent-control", arguments + ["--settings", agent.run.settingsFile], timeout: 120)
    }

    @Test func historyCommandsReadTheStoreOfAStoppedAgent() throws {
        let agent = try WorkflowAgent.start(WorkflowAgent.settings(tasks: Self.tasks, workflows: Self.workflows, schedules: Self.schedules),
                                            directory: TestPaths.temporaryDirectory("stored-history"))
        defer { _ = agent.run.stop() }
        let ran = try control(agent, ["task", "run", "hello", "--wait", "--json"])
        #expect(ran.status == 0, "\(ran.stdout)\(ran.stderr)")
        let runID = try #require(try JSONValue.parse(Data(ran.stdout.utf8))["id"]?.stringValue, "\(ran.stdout)")
        let flow = try agent.runAndWait("greet")
        #expect(flow.status == 0, "\(flow)")
        let flowID = try #require(flow.run["id"]?.stringValue)
        #expect(WorkflowAgent.wait { ((try? control(agent, ["schedule", "history", "tick", "--json"]))?.stdout.contains(#""outcome":"fired""#)) == true })
        // What the running agent answers, then the same from its store once it has stopped
        // (`hello`'s runs: the schedule's keep coming until the agent stops).
        let commands = [["task", "runs", "--task", "hello", "--json"], ["task", "show", runID, "--json"], ["workflow", "runs", "--json"],
                        ["workflow", "show", flowID, "--json"]]
        let running = try commands.map { try control(agent, $0) }
        #expect(agent.run.stop() == 0)
        for (arguments, before) in zip(commands, running) {
            let stored = try control(agent, arguments)
            #expect(stored.status == 0, "\(arguments): \(stored.status) \(stored.stderr)")
            #expect(stored.stderr.contains("note: the agent is not running; this is what its store"), "\(arguments): \(stored.stderr)")
            #expect(try lines(stored.stdout) == lines(before.stdout), "\(arguments):\n\(stored.stdout)\nwhile running:\n\(before.stdout)")
        }
        let history = try control(agent, ["schedule", "history", "tick"])
        #expect(history.status == 0 && history.stdout.contains("fired"), "\(history.stdout)\(history.stderr)")
        #expect(history.stdout.contains("succeeded"), "the runs' results, from the store: \(history.stdout)")
        // Refusals as the agent's: a run it never had, a schedule the settings lack.
        let missing = try control(agent, ["task", "show", "no-such-run"])
        #expect(missing.status == 1 && missing.stderr.contains(#"no run with id "no-such-run""#), "\(missing.stderr)")
        let typo = try control(agent, ["schedule", "history", "tikc"])
        #expect(typo.status == 1 && typo.stderr.contains(#"did you mean "tick""#), "\(typo.stderr)")
        // A command that needs the agent itself still says it is not running.
        let list = try control(agent, ["task", "list"])
        #expect(list.status == 3, "\(list.stdout)\(list.stderr)")
    }

    /// JSON lines as values: the same run may list its keys in another order.
    private func lines(_ text: String) throws -> [JSONValue] {
        try text.split(separator: "\n").map { try JSONValue.parse(Data($0.utf8)) }
    }
}
