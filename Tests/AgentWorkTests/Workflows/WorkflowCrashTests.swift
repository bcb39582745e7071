import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// Runs resume from their step log after `kill -9` of the agent: with runs in flight in a
/// parallel section, a wait for an event and an approval, the agent is killed at random
/// moments; afterwards every run completes, none is lost, and a step's task ran again at most
/// once per kill (each run appends its idempotency key to a file).
@Suite(.ownThreads) struct WorkflowCrashTests {
    /// How many times an agent is killed: 100 in all, as the issue asks, in two agents of 50
    /// kills side by side. A kill costs about 1.4 s alone (the agent's start, two runs asked
    /// over HTTP, 0.05-1.5 s of random pause), mostly waiting: one agent after the other set
    /// the whole suite's time on CI.
    static let kills = 50

    @Test(arguments: ["a", "b"])
    func killsOfTheAgentLoseNoRunAndRerunAStepAtMostOncePerKill(agentName: String) throws {
        let directory = TestPaths.temporaryDirectory("workflow-kill-\(agentName)")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Every kill interrupts the attempts running then: on a loaded machine one run's attempt
        // can be cut by more kills in a row than the default max_interruptions (10) lets a run
        // go on after — the product's guard, not a lost run; this test is about runs resuming.
        let settings = WorkflowAgent.settings(
            tasks: #""keys": {"type": "command", "command": "echo \"$AGENT_TASK_IDEMPOTENCY_KEY\" >> keys.txt; sleep 0.5; echo '{\"ok\": true}'", "shell": true, "max_concurrent": 8, "max_interruptions": 1000}"#,
            workflows: #"""
                "chaos": {"steps": [{"id": "first", "task": "keys"},
                                    {"id": "fan", "parallel": {"branches": [[{"id": "left", "task": "keys"}], [{"id": "right", "task": "keys"}]]}},
                                    {"id": "go", "wait_event": {"type": "chaos.go", "timeout": 3, "on_timeout": "continue"}},
                                    {"id": "ok", "approval": {"approvers": ["ops"], "prompt": "go on?", "timeout": 4, "on_timeout": "continue"}},
                                    {"id": "last", "task": "keys"}]},
                "signal": {"steps": [{"id": "send", "publish": {"type": "chaos.go", "payload": {}}}]}
                """#)
        try settings.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        var started: [String] = []
        var generator = SystemRandomNumberGenerator()
        for kill in 0..<Self.kills {
            let agent = try WorkflowAgent.start(nil, directory: directory)
            // Over HTTP (in this process): a CLI process per request would cost more than the kill.
            for _ in 0..<2 {
                let answer = try agent.http("POST", "/api/workflows/chaos/run", body: "{}")
                if answer.status == 200, let id = (answer.json["run"] as? [String: Any])?["id"] as? String { started.append(id) }
            }
            let pause = Double.random(in: 0.05...1.2, using: &generator)
            Thread.sleep(forTimeInterval: pause)
            if kill % 3 == 1 { _ = try? agent.http("POST", "/api/workflows/signal/run", body: "{}") }
            if kill % 3 == 2 { approveWaiting(agent) }
            Thread.sleep(forTimeInterval: Double.random(in: 0...0.3, using: &generator))
            #expect(agent.run.stop(signal: SIGKILL) != nil)
            // The agent's commands die with it (PR_SET_PDEATHSIG); then the kill is marked in
            // the file, between what ran before it and what runs after.
            Thread.sleep(forTimeInterval: 0.05)
            try Self.append("KILL \(kill)\n", to: directory + "/keys.txt")
        }
        let agent = try WorkflowAgent.start(nil, directory: directory)
        defer { _ = agent.run.stop() }
        let finished = try WorkflowAgent.wait(timeout: 180) {
            _ = try? agent.http("POST", "/api/workflows/signal/run", body: "{}")
            approveWaiting(agent)
            let runs = try agent.control(["runs", "--workflow", "chaos", "--limit", "10000", "--json"]).stdout.split(separator: "\n")
                .map { try JSONValue.parse(Data($0.utf8)) }
            return runs.count >= started.count && runs.allSatisfy { $0["status"]?.stringValue.map { ["succeeded", "failed", "cancelled"].contains($0) } == true }
        }
        let going = try agent.control(["runs", "--workflow", "chaos", "--limit", "10000"]).stdout
        #expect(finished, "runs still going:\n\(going)")
        let runs = try agent.control(["runs", "--workflow", "chaos", "--limit", "10000", "--json"]).stdout.split(separator: "\n")
            .map { try JSONValue.parse(Data($0.utf8)) }
        let byID = Dictionary(runs.map { ($0["id"]?.stringValue ?? "?", $0) }, uniquingKeysWith: { first, _ in first })
        // No run lost: every run the CLI was told started is there, and succeeded.
        for id in started {
            #expect(byID[id] != nil, "run \(id) was lost")
            #expect(byID[id]?["status"] == "succeeded", "\(id): \(String(describing: byID[id]))")
        }
        // Every task step's effect is recorded, with the step's key; a step ran again only
        // after a kill, at most once per kill: between two runs of one key lies a kill.
        let lines = WorkflowAgent.lines(directory + "/keys.txt")
        let keys = lines.filter { !$0.hasPrefix("KILL ") }
        var lastKillSeen: [String: Int] = [:]
        var kills = 0, reruns = 0
        for line in lines {
            if line.hasPrefix("KILL ") {
                kills += 1
                continue
            }
            if let previous = lastKillSeen[line] {
                #expect(previous < kills, "\(line) ran twice without a kill in between")
                reruns += 1
            }
            lastKillSeen[line] = kills
        }
        #expect(kills == Self.kills)
        for id in started {
            for step in ["first", "left", "right", "last"] {
                #expect(lastKillSeen["\(id)/\(step)/1"] != nil, "\(id)/\(step) never ran")
            }
        }
        print("workflow crash test: \(started.count) runs, \(Self.kills) kills, \(reruns) step re-runs")
        #expect(Set(keys).isSubset(of: Set(started.flatMap { id in ["first", "left", "right", "last"].map { "\(id)/\($0)/1" } })),
                "a key of no started run: \(Set(keys).subtracting(started.flatMap { id in ["first", "left", "right", "last"].map { "\(id)/\($0)/1" } }))")
    }

    static func append(_ text: String, to path: String) throws {
        let handle = FileHandle(forWritingAtPath: path) ?? {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            return FileHandle(forWritingAtPath: path)!
        }()
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }

    /// Approves every approval waiting (as ops, an approver, over HTTP).
    private func approveWaiting(_ agent: WorkflowAgent) {
        guard let answer = try? agent.http("GET", "/api/workflow-runs?status=waiting&limit=10000") else { return }
        for run in answer.json["runs"] as? [[String: Any]] ?? [] {
            guard let id = run["id"] as? String, let show = try? agent.http("GET", "/api/workflow-runs/\(id)"),
                  (show.json["steps"] as? [[String: Any]] ?? []).contains(where: { $0["step"] as? String == "ok" && $0["status"] as? String == "waiting" })
            else { continue }
            _ = try? agent.http("POST", "/api/workflow-runs/\(id)/steps/ok/approve", body: #"{"comment": "chaos"}"#)
        }
    }
}
