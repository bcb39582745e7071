import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// `task rerun RUN --wait`, like `task run --wait`: the answer comes when the new run has
/// ended, and the exit status says whether it succeeded — over the CLI and over HTTP.
@Suite(.ownThreads) struct TaskRerunWaitTests {
    @Test func aRerunWaitedForAnswersWhenTheNewRunHasEnded() throws {
        let (agent, port) = try TaskAgent.agent(tasks: #"""
            "slow": {"type": "command", "command": ["/bin/sh", "-c", "sleep 0.5; echo '{\"n\": 1}'"]},
            "broken": {"type": "command", "command": ["/bin/sh", "-c", "sleep 0.5; exit 3"]}
            """#)
        defer { _ = agent.stop() }
        let first = try runProgram("agent-control", ["task", "run", "slow", "--wait", "--json", "--settings", agent.settingsFile])
        let id = try #require(try JSONValue.parse(first.stdout)["id"]?.stringValue, "\(first.stdout)\(first.stderr)")

        let rerun = try runProgram("agent-control", ["task", "rerun", id, "--wait", "--json", "--settings", agent.settingsFile])
        #expect(rerun.status == 0, "\(rerun.stdout)\(rerun.stderr)")
        let run = try JSONValue.parse(rerun.stdout)
        #expect(run["status"] == "succeeded" && run["rerun_of"]?.stringValue == id && run["id"]?.stringValue != id, "\(run)")
        #expect(run["output"] == ["n": 1], "\(run)")

        // A rerun that fails exits 1, its details printed.
        let failed = try runProgram("agent-control", ["task", "run", "broken", "--settings", agent.settingsFile])
        let brokenID = failed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let again = try runProgram("agent-control", ["task", "rerun", brokenID, "--wait", "--settings", agent.settingsFile])
        #expect(again.status == 1 && again.stdout.contains("failed"), "\(again.stdout)\(again.stderr)")

        // Over HTTP the same: {"wait": true}.
        let answer = try TaskAgent.http("POST", "/api/runs/\(id)/rerun", port: port, body: #"{"wait": true}"#)
        #expect((answer.json["run"] as? [String: Any])?["status"] as? String == "succeeded", "\(answer.body)")
    }
}
