import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// A reload of the settings and the workflows going on: a run keeps the definition it started
/// with (also across a kill and restart), new runs take the new one; who may answer an
/// approval follows the reloaded HTTP users, tokens and roles.
@Suite(.ownThreads, .serialized) struct WorkflowReloadTests {
    static let tasks = #""keys": {"type": "command", "command": "echo \"$AGENT_TASK_IDEMPOTENCY_KEY\" >> keys.txt; echo '{\"ok\": true}'", "shell": true}"#

    /// `flow`: waits for `flow.go`, then marks its version (1: one step after the wait; 2: two).
    static func workflows(version: Int) -> String {
        let after = version == 1
            ? #"{"id": "mark", "set": {"vars": {"version": 1}}}"#
            : #"{"id": "mark", "set": {"vars": {"version": 2}}}, {"id": "extra", "task": "keys"}"#
        return #"""
            "flow": {"steps": [{"id": "go", "wait_event": {"type": "flow.go"}}, \#(after)]},
            "signal": {"steps": [{"id": "send", "publish": {"type": "flow.go", "payload": {}}}]}
            """#
    }

    @Test func aRunStartedBeforeAReloadFinishesOnTheStepsItStartedWithAndNewRunsTakeTheNewOnes() throws {
        let directory = TestPaths.temporaryDirectory("workflow-reload")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/settings.json"
        try WorkflowAgent.settings(tasks: Self.tasks, workflows: Self.workflows(version: 1)).write(toFile: file, atomically: true, encoding: .utf8)
        var agent = try WorkflowAgent.start(nil, directory: directory)
        let old = try agent.start("flow")
        #expect(try WorkflowAgent.wait { try agent.show(old).run["status"] == "waiting" })
        let oldVersion = try agent.show(old).run["version"]

        try WorkflowAgent.settings(tasks: Self.tasks, workflows: Self.workflows(version: 2)).write(toFile: file, atomically: true, encoding: .utf8)
        let reloaded = try runProgram("agent-control", ["reload", "--settings", file])
        #expect(reloaded.status == 0, "\(reloaded.stdout)\(reloaded.stderr)")
        let new = try agent.start("flow")
        #expect(try WorkflowAgent.wait { try agent.show(new).run["status"] == "waiting" })
        #expect(try agent.show(new).run["version"] != oldVersion)
        let listed = try agent.control(["list", "--json"]).stdout
        #expect(listed.contains("extra"), "workflow list shows the reloaded definition: \(listed)")

        // Across a kill and a restart too: the old run resumes on its own copy of the definition.
        #expect(agent.run.stop(signal: SIGKILL) != nil)
        agent = try WorkflowAgent.start(nil, directory: directory)
        defer { _ = agent.run.stop() }
        #expect(try WorkflowAgent.wait { try agent.show(old).run["status"] == "waiting" && agent.show(new).run["status"] == "waiting" })
        #expect(try agent.runAndWait("signal").run["status"] == "succeeded")
        #expect(try WorkflowAgent.wait { try agent.show(old).run["status"] == "succeeded" && agent.show(new).run["status"] == "succeeded" })
        let finishedOld = try agent.show(old), finishedNew = try agent.show(new)
        #expect(finishedOld.run["variables"] == ["version": 1] && finishedOld.steps["extra"] == nil && finishedOld.run["version"] == oldVersion,
                "\(finishedOld)")
        #expect(finishedNew.run["variables"] == ["version": 2] && finishedNew.steps["extra"]?["status"] == "succeeded", "\(finishedNew)")
        #expect(WorkflowAgent.lines(directory + "/keys.txt") == ["\(new)/extra/1"])
    }

    /// Tokens `ops`, `alice` and `bob` with the roles given.
    static func settings(ops: String, alice: String) -> String {
        #"""
        {"enabled_modules": [], "processes": {},
         "http": {"listen": "127.0.0.1:0", "tokens": [{"token": "${env:OPS_TOKEN}", "name": "ops", "role": "\#(ops)"},
                                                      {"token": "${env:ALICE_TOKEN}", "name": "alice", "role": "\#(alice)"}]},
         "tasks": {\#(tasks)},
         "workflows": {"gate": {"steps": [{"id": "ok", "approval": {"approvers": ["admin"], "prompt": "go on?"}}]}}}
        """#
    }

    @Test func whoMayAnswerAnApprovalFollowsAReloadOfTheRoles() throws {
        let directory = TestPaths.temporaryDirectory("workflow-reload-roles")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/settings.json"
        try Self.settings(ops: "admin", alice: "read").write(toFile: file, atomically: true, encoding: .utf8)
        let agent = try WorkflowAgent.start(nil, directory: directory)
        defer { _ = agent.run.stop() }
        let first = try agent.start("gate")
        #expect(try WorkflowAgent.wait { try agent.show(first).steps["ok"]?["status"] == "waiting" })
        // alice has the read role: not an approver of an approval for admins.
        let refused = try agent.http("POST", "/api/workflow-runs/\(first)/steps/ok/approve", token: WorkflowAgent.aliceToken, body: "{}")
        #expect(refused.status == 403 && refused.body.contains("approvers: admin"), "\(refused.status) \(refused.body)")

        // The roles change: alice becomes an admin, ops a reader.
        try Self.settings(ops: "read", alice: "admin").write(toFile: file, atomically: true, encoding: .utf8)
        let reloaded = try runProgram("agent-control", ["reload", "--settings", file])
        #expect(reloaded.status == 0, "\(reloaded.stdout)\(reloaded.stderr)")
        let second = try agent.start("gate")
        #expect(try WorkflowAgent.wait { try agent.show(second).steps["ok"]?["status"] == "waiting" })
        // ops lost the role: refused, for the approval that was waiting before the reload too.
        for id in [first, second] {
            let demoted = try agent.http("POST", "/api/workflow-runs/\(id)/steps/ok/approve", body: #"{"comment": "still me"}"#)
            #expect(demoted.status == 403 && demoted.body.contains("may not answer"), "\(demoted.status) \(demoted.body)")
        }
        #expect(try agent.show(first).steps["ok"]?["status"] == "waiting")
        // alice has it now.
        for id in [first, second] {
            let promoted = try agent.http("POST", "/api/workflow-runs/\(id)/steps/ok/approve", token: WorkflowAgent.aliceToken, body: #"{"comment": "mine now"}"#)
            #expect(promoted.status == 200, "\(promoted.status) \(promoted.body)")
            #expect(try WorkflowAgent.wait { try agent.show(id).run["status"] == "succeeded" })
            #expect(try agent.show(id).steps["ok"]?["decision"]?["by"] == "alice")
        }
    }
}
