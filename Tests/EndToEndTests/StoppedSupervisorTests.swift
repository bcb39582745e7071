import AgentTestSupport
import Foundation
import Testing

/// A supervisor stopped by SIGSTOP (ctrl-Z in its terminal) holds its control socket open and
/// never answers: `status` waited its 30 s and said only that it did not answer, exit 3 ("not
/// running"), and `stop` sent a SIGTERM the stopped process could not take and waited 120 s.
/// Both say now that it is stopped and how to resume it, and signal nothing.
@Suite(.ownThreads) struct StoppedSupervisorTests {
    static func state(_ pid: Int32) -> Character? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(close, offsetBy: 2)...].first
    }

    /// An agent, ready, then stopped by SIGSTOP (its pidfile removed first when asked).
    static func stoppedAgent(removingPidfile: Bool = false) throws -> AgentRun {
        let agent = try AgentRun(settings: #"{"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {"f": {"type": "fault", "tick_ms": 100}}}"#,
                                 arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[f] ready in") } != nil, "\(agent.transcript)")
        if removingPidfile { try FileManager.default.removeItem(atPath: agent.directory + "/.agent/run/agent.pid") }
        kill(agent.process.processIdentifier, SIGSTOP)
        #expect(OutputTestSupport.waitUntil(timeout: 60) { Self.state(agent.process.processIdentifier) == "T" })
        return agent
    }

    @Test func statusAndStopOfAStoppedAgentSaySoAtOnceAndSignalNothing() throws {
        let agent = try Self.stoppedAgent()
        let pid = agent.process.processIdentifier
        defer {
            kill(pid, SIGCONT)
            _ = agent.stop()
        }

        let status = try runProgram("agent-control", ["status", "--settings", agent.settingsFile], timeout: 120)
        #expect(status.status == 1, "\(status)")
        #expect(status.stdout.contains("the agent (pid \(pid)) is stopped") && status.stdout.contains("kill -CONT \(pid)"), "\(status)")
        let json = try runProgram("agent-control", ["status", "--json", "--settings", agent.settingsFile], timeout: 120)
        #expect(json.status == 1 && json.stdout.contains(#""running":true"#) && json.stdout.contains("is stopped"), "\(json)")

        let stop = try runProgram("agent-control", ["stop", "--settings", agent.settingsFile], timeout: 120)
        #expect(stop.status == 1, "\(stop)")
        #expect(stop.stderr.contains("the agent (pid \(pid)) is stopped"), "\(stop)")
        // Nothing was signalled: resumed, it runs on and answers.
        kill(pid, SIGCONT)
        #expect(OutputTestSupport.waitUntil(timeout: 60) { Self.state(pid) != "T" })
        let resumed = try runProgram("agent-control", ["status", "--json", "--settings", agent.settingsFile], timeout: 120)
        #expect(resumed.status == 0, "\(resumed)")
        let answer = try JSONSerialization.jsonObject(with: Data(resumed.stdout.utf8)) as? [String: Any]
        // Not stopping: no stop request waited on its socket for the SIGCONT.
        #expect(answer?["ok"] as? Bool == true && answer?["stopping"] as? Bool != true, "\(resumed)")
        #expect(agent.process.isRunning)
        #expect(!agent.stderrLines.contains { $0.contains("stop requested") || $0.contains("stopping all processes") }, "\(agent.transcript)")
        #expect(agent.stop() == 0, "\(agent.transcript)")
    }

    /// Each call against a stopped agent leaves a connection in its socket's queue, never
    /// accepted: past 64 a client's connect blocked for ever (the adversary's 66th `status`
    /// hung). It is refused at once and tried for 10 s, then said; the pidfile removed, so that
    /// the socket's listener is all there is to go by.
    @Test func callsPastAStoppedAgentsFullQueueAreSaidNotHung() throws {
        let agent = try Self.stoppedAgent(removingPidfile: true)
        let pid = agent.process.processIdentifier
        defer {
            kill(pid, SIGCONT)
            _ = agent.stop()
        }
        var last: ProgramResult?
        for _ in 0..<80 {
            let status = try runProgram("agent-control", ["status", "--settings", agent.settingsFile], timeout: 120)
            #expect(status.status == 1, "\(status)")
            last = status
            if status.stdout.contains("takes no connection") { break }
        }
        #expect(last?.stdout.contains("its queue is full, so the agent is stopped") == true, "\(String(describing: last))")
        let stop = try runProgram("agent-control", ["stop", "--settings", agent.settingsFile], timeout: 120)
        #expect(stop.status == 1 && stop.stderr.contains("takes no connection"), "\(stop)")
        kill(pid, SIGCONT)
        #expect(OutputTestSupport.waitUntil(timeout: 60) {
            (try? runProgram("agent-control", ["status", "--settings", agent.settingsFile], timeout: 120).status) == 0
        }, "\(agent.transcript)")
        #expect(agent.stop() == 0, "\(agent.transcript)")
    }
}
