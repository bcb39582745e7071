import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// Modules written in Python (jsonl/1, with SDK/Python/agentruntime.py) in the real agent,
/// beside Swift ones: events both ways, the store, the chatbot's routing, the task queue.
/// The programs are Tests/Fixtures/pyfix.
@Suite(.ownThreads) struct PythonModuleTests {
    @Test func aPythonDatasourcesEventsReachASwiftMonitorAndTheStoreWithItsState() throws {
        // `relay` (faults, Swift) emits one `relayed` event per event it takes.
        let agent = try JSONLinesFixture.start("""
            "src": {"type": "py_source", "interval": 0.01, "count": 20, "save_state": true},
            "relay": {"type": "relay", "out_type": "relayed", "burst": 0, "bytes": 4, "report_every": 20, "subscribe": ["py_reading"]}
            """, runtimeModules: ["faults"], label: "py-to-swift")
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[relay] relayed 20") } != nil, "\(agent.transcript)")
        let readings = JSONLinesFixture.events(agent, type: "py_reading")
        #expect(readings.count == 20, "\(agent.transcript)")
        #expect(readings.allSatisfy { $0["source"] as? String == "src" })
        #expect(JSONLinesFixture.wait { JSONLinesFixture.events(agent, type: "py_end").first } != nil)
        #expect(agent.stop() == 0, "\(agent.transcript)")
        let stored = try JSONLinesFixture.storedEvents(agent.directory, type: "py_reading")
        #expect(stored.map(\.source) == Array(repeating: "src", count: 20))
        #expect(stored.map { try? JSONValue.parse($0.payload) } == (1...20).map { ["n": .number(JSONNumber($0))] })
        #expect(try JSONLinesFixture.storedState(agent.directory, process: "src").map { try JSONValue.parse($0) } == ["n": 20])

        // Started again on the same store, it goes on from its saved state.
        let again = try AgentRun(settings: try String(contentsOfFile: agent.settingsFile, encoding: .utf8), arguments: ["--no-build", "--json"],
                                 directory: agent.directory)
        let end = JSONLinesFixture.wait { JSONLinesFixture.events(again, type: "py_end").first }
        #expect((end?["payload"] as? [String: Any])?["last"] as? Int == 40, "\(again.transcript)")
        #expect(again.stop() == 0)
    }

    @Test func aSwiftDatasourcesEventsReachAPythonMonitor() throws {
        let agent = try JSONLinesFixture.start("""
            "trades": {"type": "trade_feed", "pairs": ["ETH/USD"], "interval": 0.02},
            "watch": {"type": "py_watch", "echo": true}
            """, runtimeModules: ["sample"], label: "swift-to-py")
        let seen = JSONLinesFixture.wait { () -> [[String: Any]]? in
            let echoed = JSONLinesFixture.events(agent, type: "py_seen")
            return echoed.count >= 5 ? echoed : nil
        }
        #expect(seen != nil, "\(agent.transcript)")
        for echo in seen ?? [] {
            let payload = echo["payload"] as? [String: Any]
            #expect(payload?["type"] as? String == "trade" && payload?["source"] as? String == "trades", "\(echo)")
            #expect(echo["source"] as? String == "watch")
        }
        #expect(agent.stop() == 0, "\(agent.transcript)")
    }

    @Test func aPythonLogicAdapterAnswersThroughTheChatbotsRouting() throws {
        let agent = try JSONLinesFixture.start("""
            "chat": {"type": "chatbot", "logic_adapters": ["features", "status", "pyfix.py_adapter"]}
            """, label: "py-adapter")
        let settings = agent.settingsFile
        // The most confident adapter answers: the Python one for python, a built-in for status.
        let answer = JSONLinesFixture.wait { () -> String? in
            let reply = try? runProgram("agent-control", ["chat", "what does python say?", "--settings", settings])
            return reply.flatMap { $0.status == 0 ? $0.stdout : nil }
        }
        #expect(answer?.hasPrefix("bot> python says hello from ") == true, "\(answer ?? "")\n\(agent.transcript)")
        #expect(answer?.contains("in conversation ") == true, "\(answer ?? "")")
        let status = try runProgram("agent-control", ["chat", "what is the status of the processes?", "--settings", settings])
        #expect(status.status == 0 && !status.stdout.contains("python says"), "\(status.stdout)\(status.stderr)")
        #expect(agent.stop() == 0, "\(agent.transcript)")
    }

    @Test func aPythonTaskHandlerRunsThroughTheTaskQueueWithRetries() throws {
        let directory = try JSONLinesFixture.directory("py-task")
        let scratch = directory + "/scratch"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let agent = try JSONLinesFixture.start("", rest: #"""
            "tasks": {
              "flaky": {"type": "pyfix.py_task", "retries": {"max": 2, "initial_delay": 0.05}, "settings": {"fail_first": 2, "scratch": "\#(scratch)"}},
              "broken": {"type": "pyfix.py_task", "retries": {"max": 1, "initial_delay": 0.05}, "settings": {"fail_first": 5, "scratch": "\#(scratch)"}}}
            """#, directory: directory)
        let settings = agent.settingsFile
        #expect(JSONLinesFixture.waitUntilAnswering(agent), "\(agent.transcript)")
        let flaky = try runProgram("agent-control", ["task", "run", "flaky", "--input", #"{"value": 21}"#, "--wait", "--json", "--settings", settings], timeout: 120)
        #expect(flaky.status == 0, "\(flaky.stdout)\(flaky.stderr)\n\(agent.transcript)")
        let run = try JSONValue.parse(flaky.stdout)
        #expect(run["status"] == "succeeded", "\(flaky.stdout)")
        #expect(run["output"] == ["doubled": 42, "attempts": 3], "\(flaky.stdout)")
        #expect(run["attempt"] == 3, "\(flaky.stdout)")

        let broken = try runProgram("agent-control", ["task", "run", "broken", "--input", #"{"value": 1}"#, "--wait", "--json", "--settings", settings], timeout: 120)
        let failed = try JSONValue.parse(broken.stdout)
        #expect(failed["status"] == "failed", "\(broken.stdout)\(broken.stderr)")
        #expect(failed.serialized().contains("attempt 2 fails on purpose"), "\(broken.stdout)")
        // An input the handler's input_schema refuses never reaches the program.
        let refused = try runProgram("agent-control", ["task", "run", "flaky", "--input", #"{"value": "x"}"#, "--settings", settings])
        #expect(refused.status != 0 && refused.stderr.contains("/input/value"), "\(refused.stderr)")
        // A result too long for a line cannot be read: its run fails saying so (it waited for
        // ever), and the handler goes on with the next run.
        let huge = try runProgram("agent-control", ["task", "run", "flaky", "--input", #"{"value": 1, "blob": 1100000}"#, "--wait", "--json", "--settings", settings], timeout: 120)
        let tooLong = try JSONValue.parse(huge.stdout)
        #expect(tooLong["status"] == "failed", "\(huge.stdout)\(huge.stderr)")
        #expect(tooLong.serialized().contains("more than the 1048576 bytes a line may have"), "\(huge.stdout)")
        let next = try runProgram("agent-control", ["task", "run", "flaky", "--input", #"{"value": 2, "blob": 3}"#, "--wait", "--json", "--settings", settings], timeout: 120)
        #expect((try? JSONValue.parse(next.stdout))?["output"] == ["blob": "xxx"], "\(next.stdout)\(next.stderr)")
        #expect(agent.stop() == 0, "\(agent.transcript)")
    }
}
