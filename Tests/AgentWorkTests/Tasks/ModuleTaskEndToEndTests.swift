import AgentTestSupport
import Foundation
import Testing

/// A module task through the whole agent: `agent-control task run` over the control socket of
/// a real `agent-control console`, the coordinator, the module runner and an executor worker
/// of the shipped `sample` module.
@Suite(.ownThreads) struct ModuleTaskEndToEndTests {
    static func agent() throws -> AgentRun {
        let settings = #"""
            {"enabled_modules": ["sample"], "processes": {},
             "tasks": {"count": {"type": "sample.word_count", "settings": {"case_sensitive": true}, "max_concurrent": 2,
                                 "description": "Counts words"}}}
            """#
        return try AgentRun(settings: settings, arguments: ["--no-build", "--json"], directory: TestPaths.temporaryDirectory("module-tasks"))
    }

    static func control(_ agent: AgentRun, _ arguments: [String]) throws -> ProgramResult {
        try runProgram("agent-control", arguments + ["--settings", agent.settingsFile], timeout: 120)
    }

    @Test func aModuleTaskRunsThroughTheCommandLineAndItsExecutorShowsInStatus() throws {
        let agent = try Self.agent()
        defer { _ = agent.stop() }
        #expect(agent.waitForLine(onStderr: true) { $0.contains("control socket:") } != nil, "\(agent.transcript)")
        let run = try Self.control(agent, ["task", "run", "count", "--input", #"{"text": "the The the", "top": 2}"#, "--wait", "--json"])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)\n\(agent.transcript)")
        let record = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
        #expect(record["status"] as? String == "succeeded")
        let output = try #require(record["output"] as? [String: Any])
        #expect(output["words"] as? Int == 3)
        // The task's settings reached the handler: "The" is a word of its own.
        let top = (output["top"] as? [[String: Any]])?.map { "\($0["word"] ?? "") \($0["count"] ?? "")" }
        #expect(top == ["the 2", "The 1"], "\(output)")

        let status = try Self.control(agent, ["status", "--json"])
        #expect(status.stdout.contains("task:count"), "\(status.stdout)")

        // The handler's input schema (from the module's manifest) is checked at the request.
        let refused = try Self.control(agent, ["task", "run", "count", "--input", #"{"txt": "x"}"#, "--wait"])
        #expect(refused.status != 0)
        #expect((refused.stdout + refused.stderr).contains("/input"), "\(refused.stdout)\(refused.stderr)")
    }
}
