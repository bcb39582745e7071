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
}
