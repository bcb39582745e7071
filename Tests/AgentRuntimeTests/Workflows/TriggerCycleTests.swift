@testable import AgentBase
import AgentTestSupport
import Foundation
import JSONSchema
import Testing
@testable import AgentRuntime

/// Tasks and workflows whose `on_event` types and published events start one another are
/// refused at validation, with the path of the cycle, unless an `on_event` of the path says
/// `"cycle": "intended"`. Two such workflows validated before and then ran 1,500 runs a
/// second until a reload.
@Suite(.ownThreads) struct TriggerCycleTests {
    static let twoWorkflows = #"""
        "a": {"on_event": {"type": "order.y"}, "steps": [{"id": "tell", "publish": {"type": "order.x"}}]},
        "b": {"on_event": {"type": "order.x"MARK}, "steps": [{"id": "tell", "publish": {"type": "order.y"}}]},
        "alone": {"on_event": {"type": "order.x"}, "steps": [{"id": "tell", "publish": {"type": "order.z"}}]}
        """#

    @Test func validateSettingsRefusesTwoWorkflowsThatStartEachOtherAndNamesThePath() throws {
        let directory = TestPaths.temporaryDirectory("trigger-cycles")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/settings.json"
        let workflows = Self.twoWorkflows.replacingOccurrences(of: "MARK", with: "")
        try #"{"enabled_modules": [], "processes": {}, "workflows": {\#(workflows)}}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", file, "--json", "--no-build"])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        let errors = try JSONValue.parse(result.stdout)["errors"]?.arrayValue ?? []
        #expect(errors.count == 1, "\(errors)")
        let error = try #require(errors.first)
        #expect(error["pointer"]?.stringValue == "/workflows/a/on_event")
        #expect(error["file"]?.stringValue == file)
        let message = error["message"]?.stringValue ?? ""
        #expect(message.contains("workflow a publishes order.x → workflow b on_event order.x publishes order.y → workflow a"), "\(message)")
        #expect(message.contains(#""cycle": "intended""#), "\(message)")

        let marked = Self.twoWorkflows.replacingOccurrences(of: "MARK", with: #", "cycle": "intended""#)
        try #"{"enabled_modules": [], "processes": {}, "workflows": {\#(marked)}}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let accepted = try runProgram("validate-settings", ["--settings", file, "--no-build"])
        #expect(accepted.status == 0, "\(accepted.stdout)\(accepted.stderr)")
    }

    /// Issues of the trigger cycles in `tasks` and `workflows` (JSON members).
    func cycles(tasks: String = "", workflows: String = "") throws -> [SettingsIssue] {
        let json = try JSONValue.parse(#"{"enabled_modules": [], "processes": {}, "tasks": {\#(tasks)}, "workflows": {\#(workflows)}}"#)
        return AgentSettings(json: json, file: "settings.json").hostIssues.filter { $0.message.contains("trigger cycle") }
    }

    @Test func tasksAndWorkflowsCycleThroughTheirOwnEventsToo() throws {
        // Each task's runs start the other: task events come from every task.
        let tasks = try cycles(tasks: #"""
            "one": {"type": "command", "command": ["/bin/true"], "on_event": {"type": "task.succeeded"}},
            "two": {"type": "command", "command": ["/bin/true"], "on_event": {"type": "task.succeeded"}}
            """#)
        #expect(tasks.map(\.pointer) == ["/tasks/one/on_event"], "\(tasks)")
        #expect(tasks.first?.message.contains("task one publishes task.succeeded → task two on_event task.succeeded publishes task.succeeded → task one") == true,
                "\(tasks)")
        // A workflow started by its own end: its run's events are not its publish steps.
        let own = try cycles(workflows: #""again": {"on_event": {"type": "workflow.succeeded"}, "steps": [{"id": "s", "set": {"vars": {"x": 1}}}]}"#)
        #expect(own.first?.message.contains("workflow again publishes workflow.succeeded → workflow again") == true, "\(own)")
        // A workflow whose task step's run starts it; the task alone does not start itself.
        let through = try cycles(tasks: #""t": {"type": "command", "command": ["/bin/true"], "on_event": {"type": "task.failed"}}"#,
                                 workflows: #""w": {"on_event": {"type": "task.queued"}, "steps": [{"id": "s", "task": "t"}]}"#)
        #expect(through.first?.message.contains("workflow w runs task t, which publishes task.queued → workflow w") == true, "\(through)")
        #expect(through.count == 1, "\(through)")
    }

    @Test func whatTheRuntimeSkipsIsNoCycle() throws {
        // A workflow's own publish step does not start it; a task's own events do not start it.
        let none = try cycles(tasks: #""t": {"type": "command", "command": ["/bin/true"], "on_event": {"type": "task.failed"}}"#,
                              workflows: #""w": {"on_event": {"type": "ping"}, "steps": [{"id": "s", "publish": {"type": "ping"}}]}"#)
        #expect(none.isEmpty, "\(none)")
    }
}
