import AgentTestSupport
import Foundation
import Testing

/// `agent-control console --json | head`: the console's stdout is a pipe whose reader exits.
@Suite(.ownThreads, .serialized) struct ConsolePipeTests {
    @Test func aConsoleWhoseStdoutReaderExitsStopsTheAgentAndExitsZero() throws {
        let directory = TestPaths.temporaryDirectory("console-pipe")
        let settings = directory + "/settings.json"
        try EndToEndTests.sampleAgent.write(toFile: settings, atomically: true, encoding: .utf8)
        // bash for PIPESTATUS: the agent's own exit status, not head's.
        let script = #""$0" console --settings "$1" --no-build --json 2>"$2" | head -n 3 >"$3"; echo "agent exit ${PIPESTATUS[0]}""#
        let result = try runProgram("/bin/bash", ["-c", script, TestPaths.products + "/agent-control", settings,
                                                  directory + "/stderr", directory + "/stdout"], in: directory, timeout: 240)
        let stderr = (try? String(contentsOfFile: directory + "/stderr", encoding: .utf8)) ?? ""
        #expect(result.stdout.contains("agent exit 0"), "\(result.stdout)\(result.stderr)\n\(stderr)")
        let lines = try String(contentsOfFile: directory + "/stdout", encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3 && lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil }, "\(lines)")
        #expect(stderr.contains("the console's output was closed (its reader exited); stopping all processes"), "\(stderr)")
        #expect(stderr.contains("all workers stopped"), "\(stderr)")
    }

    @Test func theStartLineSaysWhereTheDashboardIsOrHowToTurnItOn() throws {
        let without = try AgentRun(settings: EndToEndTests.sampleAgent)
        let line = without.waitForLine(onStderr: true) { $0.contains("from another terminal") }
        #expect(line?.contains(#"no dashboard: "http": {"listen": "127.0.0.1:8080", "tokens": ["${env:AGENT_API_TOKEN}"]} in the settings serves it"#) == true, "\(without.transcript)")
        #expect(line?.contains("agent-control status, agent-control chat") == true)
        #expect(without.stop() == 0)

        let with = try AgentRun(settings: #"{"enabled_modules": ["sample"], "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"]}, "processes": {}}"#,
                                environment: ["AGENT_API_TOKEN": "a-token-of-at-least-32-characters-0123456789"])
        let served = with.waitForLine(onStderr: true) { $0.contains("from another terminal") }
        #expect(served?.range(of: #"dashboard and HTTP API at http://127\.0\.0\.1:[0-9]+/"#, options: .regularExpression) != nil, "\(with.transcript)")
        #expect(with.stop() == 0)
    }
}
