import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// A finished workflow run the store's retention deleted is gone for every reader: `workflow
/// runs` lists it no more and `workflow show` and a signal find no such run (the engine kept
/// recently finished runs in memory and answered from them), and its memory scope says the
/// run is missing, not "no keys".
@Suite(.ownThreads) struct WorkflowRunRetentionTests {
    @Test func aRunTheRetentionDeletedIsNotListedAndItsMemoryScopeSaysSo() throws {
        let directory = TestPaths.temporaryDirectory("workflow-retention")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let settings = WorkflowAgent.settings(tasks: "", workflows: #""note": {"steps": [{"id": "say", "publish": {"type": "noted", "payload": {}}}]}"#)
            .replacingOccurrences(of: #"{"enabled_modules": [],"#, with: #"{"enabled_modules": [], "store": {"retention": {"max_runs": 1}},"#)
        let agent = try WorkflowAgent.start(settings, directory: directory)
        defer { _ = agent.run.stop() }
        let first = try agent.runAndWait("note")
        let second = try agent.runAndWait("note")
        #expect(first.run["status"] == "succeeded" && second.run["status"] == "succeeded", "\(first.run) \(second.run)")
        let older = try #require(first.run["id"]?.stringValue), newer = try #require(second.run["id"]?.stringValue)

        func listed() throws -> [String] {
            try agent.control(["runs", "--json"]).stdout.split(separator: "\n").compactMap { try JSONValue.parse(Data($0.utf8))["id"]?.stringValue }
        }
        // The writer's retention passes 10 s after the last once a run is written; wait for it.
        let pruned = try WorkflowAgent.wait(timeout: 120) { try listed() == [newer] }
        let left = try listed()
        #expect(pruned, "listed: \(left), \(agent.run.transcript)")

        // Nor shown, nor signalled, from the engine's memory of recent runs.
        let shown = try agent.control(["show", older])
        #expect(shown.status != 0 && shown.stderr.contains("no workflow run \(older)"), "\(shown.stdout)\(shown.stderr)")
        #expect(try agent.http("GET", "/api/workflow-runs/\(older)").status == 404)
        let signalled = try agent.control(["signal", older, "go"])
        #expect(signalled.status != 0 && signalled.stderr.contains("no workflow run \(older)"), "\(signalled.stdout)\(signalled.stderr)")
        #expect(try agent.control(["show", newer]).status == 0, "the kept run is shown")
        // Nor cancelled or approved as "finished": it is not found; the kept one has finished.
        let cancelled = try agent.http("POST", "/api/workflow-runs/\(older)/cancel")
        #expect(cancelled.status == 404, "\(cancelled.status) \(cancelled.body)")
        #expect(try agent.http("POST", "/api/workflow-runs/\(newer)/cancel").status == 409)
        let approved = try agent.http("POST", "/api/workflow-runs/\(older)/steps/say/approve", body: "{}")
        #expect(approved.status == 404, "\(approved.status) \(approved.body)")
        #expect(try agent.http("POST", "/api/workflow-runs/\(newer)/steps/say/approve", body: "{}").status == 409)

        let memory = try runProgram("agent-control", ["memory", "list", "--run", older, "--settings", agent.run.settingsFile], timeout: 120)
        #expect(memory.status != 0, "\(memory.stdout)")
        #expect(memory.stderr.contains("there is no workflow run \"\(older)\""), "\(memory.stderr)")
        let kept = try runProgram("agent-control", ["memory", "list", "--run", newer, "--settings", agent.run.settingsFile], timeout: 120)
        #expect(kept.status == 0 && kept.stdout.contains("no keys"), "\(kept.stdout)\(kept.stderr)")
    }
}
