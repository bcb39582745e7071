import AgentTestSupport
import Foundation
import Testing

/// The HTTP server starts beside the first workers, off their path: one that cannot listen
/// still stops the agent (exit status 1), with the processes started meanwhile stopped.
@Suite(.ownThreads, .serialized) struct FrontStartTests {
    @Test func aTakenHTTPPortStopsTheAgentWithStatusOneAndNoWorkerLeft() throws {
        // The port is taken by a listener of the test's own.
        let taken = try StaticPageServer(html: "")
        defer { taken.stop() }
        let run = try AgentRun(settings: """
            {"enabled_modules": ["sample"], "http": {"listen": "127.0.0.1:\(taken.port)", "tokens": ["${env:AGENT_API_TOKEN}"]},
             "processes": {"trades": {"type": "trade_feed", "interval": 0.05}}}
            """, environment: ["AGENT_API_TOKEN": "a-token-of-at-least-32-characters-0123456789"])
        defer { _ = run.stop(signal: SIGKILL, timeout: 10) }
        let status = run.waitForExit(timeout: 60)
        #expect(status == 1, "\(run.transcript)")
        let said = run.stderrLines.joined(separator: "\n")
        #expect(said.contains("http: cannot listen on 127.0.0.1") && said.contains("the agent stops; the processes it started meanwhile are stopped"),
                "\(run.transcript)")
        // Whatever was started is gone with the agent.
        for pid in run.workerPids("trades") {
            #expect(!AgentRun.isAlive(pid), "worker \(pid) outlived the agent\n\(run.transcript)")
        }
    }

    /// `agent-control start` said "started" (exit 0) while the agent it started was stopping
    /// because its HTTP port was taken (8 of 10 starts): it now waits for the HTTP server too.
    @Test func aStartWhoseHTTPPortIsTakenFailsWithTheAgentsLog() throws {
        let taken = try StaticPageServer(html: "")
        defer { taken.stop() }
        let folder = TestPaths.temporaryDirectory("front-start")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let settings = folder + "/settings.json"
        try """
            {"enabled_modules": ["sample"], "store": {"enabled": false},
             "http": {"listen": "127.0.0.1:\(taken.port)", "tokens": ["${env:AGENT_API_TOKEN}"]},
             "processes": {"trades": {"type": "trade_feed", "interval": 0.05}}}
            """.write(toFile: settings, atomically: true, encoding: .utf8)
        let environment = ["AGENT_API_TOKEN": "a-token-of-at-least-32-characters-0123456789"]
        defer { _ = try? runProgram("agent-control", ["stop", "--settings", settings, "--timeout", "20"], environment: environment) }
        let started = try runProgram("agent-control", ["start", "--no-build", "--settings", settings], environment: environment)
        #expect(started.status == 1, "\(started.stdout)\n\(started.stderr)")
        #expect(!started.stdout.contains("started: pid"), "\(started.stdout)")
        #expect(started.stderr.contains("http: cannot listen on 127.0.0.1") && started.stderr.contains("the agent did not start"), "\(started.stderr)")
    }
}
