import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// Declared executors in a fleet: each agent carries out the runs it claims on its own
/// executors (by the task's strategy), and claims only the runs whose required labels one of
/// them carries — so a run requiring a label only one agent's executor has goes to that agent,
/// whichever agent it was submitted to.
@Suite(.ownThreads, .serialized) struct FleetExecutorsEndToEndTests {
    static func agent(_ id: String, database: String, executor: String, labels: String) throws -> AgentRun {
        try AgentRun.fleetAgent(id, database: database, folder: "fleet-executors-\(id)", settings: #"""
            "enabled_modules": ["faults"],
            "processes": {"\#(executor)": {"type": "executor", "max_concurrent": 2, "labels": \#(labels), "tasks": {"work": {}}}},
            "tasks": {"work": {"type": "faults.fault_task", "max_concurrent": 4}}
            """#)
    }

    static func control(_ agent: AgentRun, _ arguments: [String]) throws -> ProgramResult { try agent.control(arguments) }

    static func submit(_ agent: AgentRun, require: [String] = []) throws -> String {
        let result = try control(agent, ["task", "run", "work", "--input", #"{"mode": "sleep", "ms": 200}"#, "--json"] + require.flatMap { ["--require", $0] })
        guard result.status == 0, let id = try JSONValue.parse(Data(result.stdout.utf8))["id"]?.stringValue else {
            throw HTTPProbe.Failure(description: "not queued: \(result.status) \(result.stdout)\(result.stderr)")
        }
        return id
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "\(PostgresTestServer.unavailableReason ?? "")"))
    func eachAgentRunsWhatItClaimsOnItsExecutorsAndOnlyRunsWhoseLabelsOneCarries() async throws {
        let database = try PostgresTestServer.require().makeDatabase()
        let a = try Self.agent("host-a", database: database, executor: "gpus", labels: #"{"gpu": "yes"}"#)
        defer { _ = a.stop() }
        let b = try Self.agent("host-b", database: database, executor: "cpus", labels: "{}")
        defer { _ = b.stop() }

        // Runs requiring a GPU, submitted to the agent without one; runs requiring nothing, to both.
        var gpu: [String] = [], any: [String] = []
        for _ in 0..<4 { gpu.append(try Self.submit(b, require: ["gpu=yes"])) }
        for agent in [a, b, a, b] { any.append(try Self.submit(agent)) }

        let deadline = Date().addingTimeInterval(90)
        var runs: [String: JSONValue] = [:]
        while Date() < deadline {
            for id in gpu + any where runs[id]?["status"] != "succeeded" {
                let shown = try Self.control(b, ["task", "show", id, "--json"])
                if shown.status == 0 { runs[id] = try JSONValue.parse(Data(shown.stdout.utf8)) }
            }
            if (gpu + any).allSatisfy({ runs[$0]?["status"] == "succeeded" }) { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        for id in gpu {
            let run = runs[id]
            #expect(run?["status"] == "succeeded" && run?["attempt"] == 1, "\(id): \(String(describing: run))\n\(a.transcript)")
            #expect(run?["agent"] == "host-a", "a run requiring gpu=yes runs on the agent whose executor carries it: \(String(describing: run))")
            #expect(run?["executor"]?.stringValue?.hasPrefix("gpus") == true, "on that executor: \(String(describing: run))")
        }
        for id in any {
            let run = runs[id]
            #expect(run?["status"] == "succeeded", "\(id): \(String(describing: run))")
            let executor = run?["executor"]?.stringValue ?? ""
            let agent = run?["agent"]?.stringValue ?? ""
            #expect((agent == "host-a" && executor.hasPrefix("gpus")) || (agent == "host-b" && executor.hasPrefix("cpus")),
                    "a run goes through a declared executor of the agent that claimed it: \(String(describing: run))")
        }
    }
}
