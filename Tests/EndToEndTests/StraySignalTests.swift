import AgentTestSupport
import Foundation
import Testing

/// A module's worker is the supervisor's child: `kill(getppid(), SIGUSR2)` (or SIGALRM, …)
/// ended the agent without a word. Such signals are caught and said now; its workers still get
/// the default actions.
@Suite(.ownThreads) struct StraySignalTests {
    /// The bit of `signal` in a /proc/PID/status mask line (`SigCgt:`, `SigIgn:`).
    static func mask(_ pid: Int32, _ field: String, has signal: Int32) -> Bool? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let bits = UInt64(line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces), radix: 16) else { return nil }
        return bits & (1 << UInt64(signal - 1)) != 0
    }

    @Test func strayTerminatingSignalsAreSaidAndIgnoredAndWorkersKeepTheirDefaults() throws {
        let agent = try AgentRun(settings: #"{"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {"f": {"type": "fault", "tick_ms": 100}}}"#,
                                 arguments: ["--no-build", "--quiet"])
        defer { _ = agent.stop() }
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[f] ready in") } != nil, "\(agent.transcript)")
        let pid = agent.process.processIdentifier
        for signal in [SIGUSR2, SIGALRM, SIGXFSZ] {
            kill(pid, signal)
            let name = signal == SIGUSR2 ? "SIGUSR2" : signal == SIGALRM ? "SIGALRM" : "SIGXFSZ"
            #expect(agent.waitForLine(onStderr: true, timeout: 30) { $0.contains("\(name) received") && $0.contains("ignored") } != nil,
                    "\(agent.transcript)")
        }
        #expect(agent.process.isRunning)
        let status = try runProgram("agent-control", ["status", "--settings", agent.settingsFile])
        #expect(status.status == 0, "\(status.stderr)")
        // A worker has the defaults: neither caught nor ignored.
        let worker = try #require(agent.workerPids("f").last)
        #expect(Self.mask(worker, "SigCgt", has: SIGUSR2) == false)
        #expect(Self.mask(worker, "SigIgn", has: SIGUSR2) == false)
        #expect(Self.mask(pid, "SigCgt", has: SIGUSR2) == true)
        #expect(agent.stop() == 0, "\(agent.transcript)")
    }
}
