import AgentTestSupport
import Foundation
import Testing

/// Lists of runs stay small however large the runs: a member longer than 4 KiB of JSON (an
/// input, an output, a workflow's variables) is left out of `GET /api/runs` and
/// `GET /api/workflow-runs` and named in the run's `omitted`; the run by its id has it. A list
/// of 100 runs of 2 MiB each answered 200 MB.
@Suite(.ownThreads) struct HTTPRunListTests {
    static func runs(_ reply: RawHTTP.Reply) -> [[String: Any]] { reply.json?["runs"] as? [[String: Any]] ?? [] }

    @Test func aListLeavesOutLongMembersAndNamesThemAndTheRunByIdAndTheStoppedAgentsStoreAgree() throws {
        let agent = try HTTPAgent(modules: [], settings: #"""
        "tasks": {"t": {"type": "command", "command": ["/bin/true"]},
                  "print": {"type": "command", "command": "printf '\"'; head -c 600000 /dev/zero | tr '\\0' x; printf '\"'", "shell": true}},
        "workflows": {"grow": {"steps": [{"id": "one", "task": "print"}, {"id": "keep", "set": {"vars": {"a": "${steps:one}"}}}]}}
        """#)
        let text = String(repeating: "y", count: 100_000)
        let big = try agent.request("POST", "/api/tasks/t/run", body: #"{"input": {"text": "\#(text)"}, "wait": true}"#)
        let bigID = try #require((big.json?["run"] as? [String: Any])?["id"] as? String, "\(big)")
        let small = try agent.request("POST", "/api/tasks/t/run", body: #"{"input": {"n": 1}, "wait": true}"#)
        let smallID = try #require((small.json?["run"] as? [String: Any])?["id"] as? String, "\(small)")
        let printed = try agent.request("POST", "/api/tasks/print/run", body: #"{"wait": true}"#)
        #expect((printed.json?["run"] as? [String: Any])?["status"] as? String == "succeeded", "\(printed)")
        let grown = try agent.request("POST", "/api/workflows/grow/run", body: #"{"wait": true}"#)
        #expect((grown.json?["run"] as? [String: Any])?["status"] as? String == "succeeded", "\(grown)")

        let list = try agent.request("GET", "/api/runs?limit=100")
        #expect(list.status == 200)
        // Four task runs (t twice, print twice: alone and as the workflow's step), no member over 4 KiB.
        #expect(list.body.utf8.count < 16_384, "\(list.body.utf8.count) bytes")
        let byID = Dictionary(Self.runs(list).compactMap { run in (run["id"] as? String).map { ($0, run) } }) { first, _ in first }
        #expect(byID.count == 4, "\(list.body.prefix(2_000))")
        #expect(byID[bigID]?["input"] == nil)
        #expect(byID[bigID]?["omitted"] as? [String] == ["input"])
        #expect(byID[bigID]?["status"] as? String == "succeeded")
        #expect((byID[smallID]?["input"] as? [String: Any])?["n"] as? Int == 1)
        #expect(byID[smallID]?["omitted"] == nil)
        let printRuns = byID.values.filter { $0["task"] as? String == "print" }
        #expect(printRuns.count == 2 && printRuns.allSatisfy { $0["omitted"] as? [String] == ["output"] && $0["output"] == nil }, "\(printRuns)")

        let whole = try agent.request("GET", "/api/runs/\(bigID)")
        #expect(((whole.json?["run"] as? [String: Any])?["input"] as? [String: Any])?["text"] as? String == text)

        let workflows = try agent.request("GET", "/api/workflow-runs?workflow=grow")
        let listedRun = try #require(Self.runs(workflows).first, "\(workflows)")
        // Its output is its variables (a workflow's output when it names none).
        #expect(listedRun["omitted"] as? [String] == ["output", "variables"], "\(listedRun)")
        #expect(listedRun["variables"] == nil)
        #expect(listedRun["status"] as? String == "succeeded")
        let workflowID = try #require(listedRun["id"] as? String)
        let wholeWorkflow = try agent.request("GET", "/api/workflow-runs/\(workflowID)")
        #expect((((wholeWorkflow.json?["run"] as? [String: Any])?["variables"] as? [String: Any])?["a"] as? String)?.count == 600_000)

        // The stopped agent's store: read by `agent-control`, its records for lists.
        #expect(agent.run.stop() == 0, "\(agent.run.transcript)")
        let offline = try runProgram("agent-control", ["task", "runs", "--json", "--settings", agent.run.settingsFile])
        #expect(offline.status == 0, "\(offline.stderr)")
        #expect(offline.stdout.utf8.count < 16_384, "\(offline.stdout.utf8.count) bytes")
        let lines = offline.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.count == 4, "\(offline.stdout.prefix(2_000))")
        #expect(lines.first { $0["id"] as? String == bigID }?["omitted"] as? [String] == ["input"])
        #expect(lines.filter { $0["omitted"] as? [String] == ["output"] }.count == 2)
        let offlineWorkflows = try runProgram("agent-control", ["workflow", "runs", "--json", "--settings", agent.run.settingsFile])
        #expect(offlineWorkflows.stdout.contains(#""omitted":["output","variables"]"#), "\(offlineWorkflows.stdout.prefix(2_000))")
    }
}
