import AgentTestSupport
import Foundation
import Testing

/// A worker stopped by SIGSTOP shows as `stopped (SIGSTOP)` in `agent-control status` of a
/// detached agent, the log says so, and it is `running` again after SIGCONT.
@Suite(.ownThreads) struct SuspendedWorkerTests {
    @Test func workerStoppedBySIGSTOPShowsStoppedUntilSIGCONT() throws {
        let agent = try DaemonTests.Agent(#"{"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {"f": {"type": "fault", "tick_ms": 100}}}"#)
        defer { try? FileManager.default.removeItem(atPath: agent.directory) }
        let started = try agent.control(["start", "--no-build"])
        #expect(started.status == 0, "\(started.stderr)")
        let running = try agent.waitUntil { $0["f"]?["state"] as? String == "running" }
        let pid = Int32(try #require(running["f"]?["pid"] as? Int))

        kill(pid, SIGSTOP)
        let stopped = try agent.waitUntil(timeout: 10) { $0["f"]?["state"] as? String == "suspended" }
        #expect(stopped["f"]?["stop_signal"] as? String == "SIGSTOP", "\(stopped)")
        let table = try agent.control(["status"])
        #expect(table.stdout.split(separator: "\n").contains { $0.hasPrefix("f ") && $0.contains("stopped (SIGSTOP)") && $0.contains("\(pid)") }, "\(table.stdout)")
        #expect(agent.log.contains("[f] worker pid \(pid) was stopped by SIGSTOP"), "\(agent.log)")

        kill(pid, SIGCONT)
        let resumed = try agent.waitUntil(timeout: 10) { $0["f"]?["state"] as? String == "running" }
        #expect(resumed["f"]?["pid"] as? Int == Int(pid))
        #expect(resumed["f"]?["stop_signal"] == nil)
        #expect(try agent.control(["status"]).stdout.split(separator: "\n").contains { $0.hasPrefix("f ") && $0.contains("running") })
        #expect(agent.log.contains("[f] worker pid \(pid) continued (SIGCONT) after SIGSTOP"), "\(agent.log)")
        #expect(try agent.control(["stop"]).status == 0)
    }

    /// A worker that dies while a debugger holds it (here killed) is a zombie only its tracer
    /// can reap first: the supervisor takes it as dead at once — the log says who holds it, the
    /// process restarts, the agent stops — rather than show it running, wake on its pidfd on
    /// every turn of the loop and wait for the debugger to let go.
    @Test func aWorkerThatDiesWhileADebuggerHoldsItIsRestartedAndDoesNotHoldTheStop() throws {
        let debugger = try DebuggerHold.make()
        let agent = try AgentRun(settings: #"{"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {"f": {"type": "fault", "tick_ms": 100, "restart": {"initial_delay": 0, "max_restarts": null}}}}"#,
                                 arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[f] ready in") } != nil, "\(agent.transcript)")
        let pid = try #require(agent.workerPids("f").last)
        try #require(debugger.hold(pid) == 0, "the test could not trace the worker")
        defer { debugger.release(pid) }
        kill(pid, SIGKILL)
        #expect(agent.waitForLine(onStderr: true, timeout: 30) { $0.contains("[f] worker pid \(pid) died while a debugger (thread ") } != nil, "\(agent.transcript)")
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("[f] ready in") }.count == 2, "\(agent.transcript)")
        #expect(agent.workerPids("f").last != pid)
        #expect(agent.stop(timeout: 60) == 0, "\(agent.transcript)")
        debugger.release(pid)
    }

    /// An agent of one `fault` process that restarts at once, with a warm spare (made after
    /// its first crash's restart is ready); the spare's pid.
    private static func agentWithASpare() throws -> (AgentRun, Int32) {
        let agent = try AgentRun(settings: #"{"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {"f": {"type": "fault", "tick_ms": 100, "restart": {"initial_delay": 0, "max_restarts": null}}}}"#,
                                 arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[f] ready in") } != nil, "\(agent.transcript)")
        kill(try #require(agent.workerPids("f").last), SIGKILL)
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("[f] ready in") }.count == 2, "\(agent.transcript)")
        let workers = Set(agent.workerPids("f"))
        var spare: Int32?
        let deadline = Date().addingTimeInterval(30)
        while spare == nil, Date() < deadline {
            spare = ForkServerTests.children(of: agent.process.processIdentifier).first {
                !workers.contains($0) && ForkServerTests.commandLine(of: $0).hasPrefix("agent-worker --spare")
            }
            if spare == nil { usleep(10_000) }
        }
        return (agent, try #require(spare, "no spare after the first crash\n\(agent.transcript)"))
    }

    /// A warm spare that dies while a debugger holds it is dropped at once (its pidfd, readable
    /// while the zombie is the debugger's, kept the loop busy, and the next restart adopted the
    /// dead spare); the next restart starts a worker of its own.
    @Test func aSpareThatDiesWhileADebuggerHoldsItIsNotAdopted() throws {
        let debugger = try DebuggerHold.make()
        let (agent, spare) = try Self.agentWithASpare()
        try #require(debugger.hold(spare) == 0, "the test could not trace the spare")
        defer { debugger.release(spare) }
        kill(spare, SIGKILL)
        #expect(agent.waitForLine(onStderr: true, timeout: 30) { $0.contains("pid \(spare) (") && $0.contains("is dead, but a debugger (thread ") } != nil, "\(agent.transcript)")
        kill(try #require(agent.workerPids("f").last), SIGKILL)
        #expect(agent.waitForLines(onStderr: true, count: 3) { $0.contains("[f] ready in") }.count == 3, "\(agent.transcript)")
        #expect(agent.workerPids("f").last != spare, "the dead spare was adopted\n\(agent.transcript)")
        #expect(agent.stop(timeout: 60) == 0, "\(agent.transcript)")
        debugger.release(spare)
    }

    /// A warm spare a debugger holds when the agent stops is killed and not waited for: the
    /// wait for the dead spare, which only the debugger can reap first, held the loop and the
    /// stop until the debugger let go.
    @Test func aSpareADebuggerHoldsDoesNotHoldTheStop() throws {
        let debugger = try DebuggerHold.make()
        let (agent, spare) = try Self.agentWithASpare()
        try #require(debugger.hold(spare) == 0, "the test could not trace the spare")
        defer { debugger.release(spare) }
        #expect(agent.stop(timeout: 60) == 0, "\(agent.transcript)")
        debugger.release(spare)
    }
}
