import AgentTestSupport
import CAgentSystem
import Foundation
import Testing

/// A ready worker keeps an exit reaper (exit_reaper.c): a process sharing its address space, so
/// that the kernel frees that space after the worker's death is reported, not inside its exit.
/// The supervisor kills the reaper once no restart is starting, quietly, and none is left when
/// the agent stops.
@Suite(.ownThreads) struct ExitReaperTests {
    private static let settings = #"""
        {"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {
          "one": {"type": "fault", "tick_ms": 200, "restart": {"initial_delay": 0, "max_restarts": null}}}}
        """#

    /// The children of `pid` (the faults module starts none of its own).
    private static func children(of pid: Int32) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    /// `worker`'s reaper: named and in a group of its own when its clone returned, before the
    /// worker said ready.
    private static func reaper(of worker: Int32) -> Int32? {
        children(of: worker).first { ProcFacts.command($0) == "agent-exit" }
    }

    /// Waits (generously) until `condition` holds.
    private static func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while !condition(), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        return condition()
    }

    private static func isListed(_ pid: Int32) -> Bool { FileManager.default.fileExists(atPath: "/proc/\(pid)") }

    @Test func aWorkerHasAReaperSharingItsMemoryWhichTheSupervisorReapsQuietlyAfterItsDeathAndAtTheStop() throws {
        let agent = try AgentRun(settings: Self.settings, arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[one] ready in") } != nil, "\(agent.transcript)")
        let worker = try #require(agent.workerPids("one").first)
        let reaper = try #require(Self.reaper(of: worker), "no exit reaper under worker \(worker): \(agent.transcript)")
        let shares = agent_share_address_space(worker, reaper)
        #expect(shares == 1, "the reaper \(reaper) does not share worker \(worker)'s memory (\(shares): \(String(cString: strerror(errno))))")
        #expect(agent_share_address_space(worker, agent.process.processIdentifier) == 0, "the check tells processes apart")
        // Its own group: the supervisor's kill of the dead worker's group leaves it.
        #expect(getpgid(reaper) == reaper)
        #expect(getpgid(worker) == worker)
        // Of the descriptors the clone copied it keeps only a pidfd of the worker (its first
        // step): a dead worker's sockets, pipes and locks are not held by it.
        #expect(Self.eventually { ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(reaper)/fd")) ?? []).count == 1 },
                "reaper \(reaper)'s descriptors: \((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(reaper)/fd")) ?? [])")

        kill(worker, SIGKILL)
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("[one] ready in") }.count == 2, "\(agent.transcript)")
        // Killed and reaped by the supervisor (its subreaper) once the replacement is ready.
        #expect(Self.eventually { !Self.isListed(reaper) }, "reaper \(reaper) still listed: \(ProcFacts.status(reaper, "State"))")
        #expect(!agent.transcript.contains("left behind by a dead worker"), "\(agent.transcript)")

        // The replacement has one of its own, which does not outlive the agent.
        let replacement = try #require(agent.workerPids("one").last)
        let second = try #require(Self.reaper(of: replacement), "no exit reaper under the replacement \(replacement)")
        #expect(agent.stop() == 0)
        #expect(ProcFacts.survivors(of: [replacement, second], within: 30).isEmpty, "alive after the stop: \(agent.transcript)")
        #expect(!agent.transcript.contains("left behind by a dead worker"), "\(agent.transcript)")
    }

    @Test func aWorkerGoesWithoutAReaperWhenTheEnvironmentSaysSo() throws {
        let agent = try AgentRun(settings: Self.settings, arguments: ["--no-build", "--quiet"],
                                 environment: ["AGENT_WORKER_EXIT_REAPER": "0"])
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[one] ready in") } != nil, "\(agent.transcript)")
        let worker = try #require(agent.workerPids("one").first)
        // A reaper is started before the ready frame: none now, none ever.
        #expect(Self.children(of: worker).isEmpty, "children of worker \(worker): \(Self.children(of: worker))")
        #expect(ProcFacts.isAlive(worker))
        #expect(agent.stop() == 0)
    }

    /// A process that never says ready (600 s of start timeout) does not keep another's dead
    /// workers' reapers, and their memory, alive: the sweep waits only for a worker in the
    /// first tenth of a second of its start, a quarter of a second at most.
    @Test func aProcessStuckInItsStartKeepsNoDeadWorkersReaperAlive() throws {
        let agent = try JSONLinesFixture.start(#"""
            "slow": {"type": "py_fault", "mode": "never_ready", "start_timeout": 600},
            "mortal": {"type": "py_fault", "mode": "healthy", "restart": {"initial_delay": 0, "max_restarts": null}}
            """#, label: "reaper-stuck")
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[mortal] ready in") } != nil, "\(agent.transcript)")
        let worker = try #require(agent.workerPids("mortal").first)
        // The worker dies when the test says, once its reaper is found: a worker that crashed on
        // a timer of its own (0.2 s after its ready) could be gone, and its reaper no longer its
        // child, before a loaded machine's test read the ready line.
        let reaper = try #require(Self.reaper(of: worker), "no exit reaper under worker \(worker): \(Self.children(of: worker))")
        kill(worker, SIGKILL)
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[mortal] worker pid \(worker) ") } != nil, "\(agent.transcript)")
        // Its replacement is started while `slow` still is.
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("[mortal] ready in") }.count == 2, "\(agent.transcript)")
        #expect(Self.eventually { !Self.isListed(reaper) }, "reaper \(reaper) still listed: \(ProcFacts.status(reaper, "State"))")
        #expect(!agent.transcript.contains("left behind by a dead worker"), "\(agent.transcript)")
        #expect(agent.stop() == 0)
    }
}
