import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// Schedules that start workflows (`"run": {"workflow": NAME}`): validated with the other
/// schedule problems, fired by a real agent, each fire's run committed with the fire.
@Suite(.ownThreads, .serialized) struct WorkflowScheduleTests {
    @Test func aScheduleOfAnUnknownWorkflowOrABadInputIsAnErrorAtItsPointer() throws {
        let directory = TestPaths.temporaryDirectory("workflow-schedule-settings")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/settings.json"
        try #"""
            {"enabled_modules": [], "processes": {},
             "tasks": {"backup": {"type": "command", "command": ["/bin/true"]}},
             "workflows": {"refunds": {"input": {"type": "object", "properties": {"amount": {"type": "number"}}},
                                       "steps": [{"id": "go", "task": "backup"}]},
                           "broken": {"steps": [{"id": "x", "task": "nothing"}]}},
             "schedules": {"typo": {"every": 60, "run": {"workflow": "refnds"}},
                           "both": {"every": 60, "run": {"task": "backup", "workflow": "refunds"}},
                           "neither": {"every": 60, "run": {"input": {}}},
                           "input": {"every": 60, "run": {"workflow": "refunds", "input": {"amount": "ten"}}},
                           "invalid": {"every": 60, "run": {"workflow": "broken"}},
                           "good": {"every": 60, "run": {"workflow": "refunds", "input": {"amount": 10}}}}}
            """#.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", file, "--no-build", "--json"])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        let report = try JSONValue.parse(Data(result.stdout.utf8))
        var found: [String: String] = [:]
        for error in report["errors"]?.arrayValue ?? [] {
            let pointer = error["pointer"]?.stringValue ?? "?"
            found[pointer, default: ""] += (error["message"]?.stringValue ?? "") + (error["follows_from"] != nil ? " [follows]" : "")
        }
        #expect(found["/schedules/typo/run/workflow"]?.contains("unknown workflow \"refnds\"; did you mean \"refunds\"") == true, "\(found)")
        #expect(found["/schedules/both/run"]?.contains("not both") == true, "\(found)")
        #expect(found["/schedules/neither/run"]?.contains("found neither") == true, "\(found)")
        #expect(found["/schedules/input/run/input/amount"]?.contains("input schema of workflow \"refunds\"") == true, "\(found)")
        // The workflow's own error is reported; the schedule's is a consequence, not counted twice.
        #expect(found["/workflows/broken/steps/0/task"] != nil, "\(found)")
        #expect(found["/schedules/invalid/run/workflow"] == nil, "\(found)")
        #expect(found.keys.filter { $0.hasPrefix("/schedules/good") }.isEmpty, "\(found)")
    }

    @Test func aScheduleStartsRunsOfItsWorkflowThatCompleteAndSurviveAKill() throws {
        let directory = TestPaths.temporaryDirectory("workflow-schedule")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let settings = WorkflowAgent.settings(
            tasks: #""keys": {"type": "command", "command": "echo \"$AGENT_TASK_IDEMPOTENCY_KEY\" >> keys.txt; echo '{\"ok\": true}'", "shell": true}"#,
            workflows: #"""
                "tick": {"input": {"type": "object", "required": ["label"], "properties": {"label": {"type": "string"}}},
                         "steps": [{"id": "mark", "task": "keys"}, {"id": "note", "set": {"vars": {"label": "${input:/label}"}}}]}
                """#,
            schedules: #""every_second": {"every": 1, "run": {"workflow": "tick", "input": {"label": "scheduled"}}, "overlap": "allow"}"#)
        try settings.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        var agent = try WorkflowAgent.start(nil, directory: directory)
        func history() throws -> [JSONValue] {
            let result = try runProgram("agent-control", ["schedule", "history", "every_second", "--json", "--limit", "1000", "--settings", agent.run.settingsFile])
            return try result.stdout.split(separator: "\n").map { try JSONValue.parse(Data($0.utf8)) }
        }
        // A fire's run is a workflow run, started by the schedule, that completes.
        let succeeded = try WorkflowAgent.wait { try history().contains { $0["outcome"] == "fired" && $0["result"] == "succeeded" } }
        let seen = try history()
        #expect(succeeded, "\(seen)\n\(agent.run.transcript)")
        let fired = try #require(try history().first { $0["result"] == "succeeded" })
        let id = try #require(fired["run_id"]?.stringValue)
        let shown = try agent.show(id)
        #expect(shown.run["workflow"] == "tick" && shown.run["status"] == "succeeded" && shown.run["requested_by"] == "schedule", "\(shown.run)")
        #expect(shown.run["variables"] == ["label": "scheduled"], "\(shown.run)")
        #expect(shown.steps["mark"]?["idempotency_key"] == .string("\(id)/mark/1"), "\(shown.steps)")
        let listed = try runProgram("agent-control", ["schedule", "list", "--settings", agent.run.settingsFile])
        #expect(listed.stdout.contains("every_second  workflow tick  every 1 s"), "\(listed.stdout)")
        // Run now: a workflow run at once.
        let now = try runProgram("agent-control", ["schedule", "run", "every_second", "--json", "--settings", agent.run.settingsFile])
        let started = try JSONValue.parse(Data(now.stdout.utf8))
        #expect(now.status == 0 && started["workflow"] == "tick", "\(now.stdout)\(now.stderr)")
        let nowID = try #require(started["id"]?.stringValue)
        #expect(try WorkflowAgent.wait { try agent.show(nowID).run["status"] == "succeeded" })

        // Killed between fires: every fire recorded has its run, which the next start completes.
        Thread.sleep(forTimeInterval: Double.random(in: 0.2...0.9))
        #expect(agent.run.stop(signal: SIGKILL) != nil)
        agent = try WorkflowAgent.start(nil, directory: directory)
        defer { _ = agent.run.stop() }
        let lines = try history()
        let ids = lines.filter { $0["outcome"] == "fired" }.compactMap { $0["run_id"]?.stringValue }
        #expect(ids.count >= 2, "\(lines)")
        let completed = try WorkflowAgent.wait { try ids.allSatisfy { try agent.show($0).run["status"] == "succeeded" } }
        let runs = try ids.map { try agent.show($0).run }
        #expect(completed, "\(runs)")
        // Each fire ran its task step once (a step in flight at the kill may run again, with its key).
        let keys = Set(WorkflowAgent.lines(directory + "/keys.txt"))
        for id in ids { #expect(keys.contains("\(id)/mark/1"), "\(id) never ran its step") }
    }
}
