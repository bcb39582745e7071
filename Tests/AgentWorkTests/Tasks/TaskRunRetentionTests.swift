import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// A finished task run the store's retention deleted is gone for every reader: `task runs`
/// listed it and `task show` showed it from the coordinator's memory of recent runs.
@Suite(.ownThreads) struct TaskRunRetentionTests {
    @Test func aRunTheRetentionDeletedIsNeitherListedNorShown() throws {
        let settings = #"""
            {"enabled_modules": [], "processes": {}, "store": {"retention": {"max_runs": 1}},
             "tasks": {"hello": {"type": "command", "command": "echo '{}'", "shell": true}}}
            """#
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--json"], directory: TestPaths.temporaryDirectory("task-retention"))
        defer { _ = agent.stop() }
        #expect(agent.waitForLine(onStderr: true) { $0.contains("control socket:") } != nil, "\(agent.transcript)")
        func control(_ arguments: [String]) throws -> ProgramResult {
            try runProgram("agent-control", arguments + ["--settings", agent.settingsFile], timeout: 120)
        }
        func run() throws -> String {
            let result = try control(["task", "run", "hello", "--wait", "--json"])
            let run = try JSONValue.parse(Data(result.stdout.utf8))
            #expect(run["status"] == "succeeded", "\(result.stdout)\(result.stderr)")
            return run["id"]?.stringValue ?? "?"
        }
        let older = try run(), newer = try run()
        // A run just finished is listed and shown at once (the list waits for the writes).
        #expect(try control(["task", "show", newer]).status == 0)

        func listed() throws -> [String] {
            try control(["task", "runs", "--json"]).stdout.split(separator: "\n").compactMap { try JSONValue.parse(Data($0.utf8))["id"]?.stringValue }
        }
        // The writer's retention passes 10 s after the last once a run is written; wait for it.
        let pruned = try WorkflowAgent.wait(timeout: 120) { try listed() == [newer] }
        let left = try listed()
        #expect(pruned, "listed: \(left)")
        let shown = try control(["task", "show", older])
        #expect(shown.status != 0 && shown.stderr.contains("no run with id \"\(older)\""), "\(shown.stdout)\(shown.stderr)")
        #expect(try control(["task", "show", newer]).status == 0, "the kept run is shown")
    }
}
