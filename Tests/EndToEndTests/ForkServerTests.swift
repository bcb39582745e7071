import AgentTestSupport
import Foundation
import Testing

/// Workers forked by agent-control's fork server: what they look like from outside, and what
/// happens when the server is turned off or dies.
@Suite(.ownThreads, .serialized) struct ForkServerTests {
    private static let settings = #"{"enabled_modules": ["faults"], "processes": {"one": {"type": "fault", "tick_ms": 200}, "two": {"type": "fault", "tick_ms": 200}}}"#

    /// The children of `pid`, from /proc.
    static func children(of pid: Int32) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    /// /proc/PID/cmdline with NULs as spaces, trailing blanks removed.
    static func commandLine(of pid: Int32) -> String {
        let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
        return String(decoding: data.map { $0 == 0 ? 32 : $0 }, as: UTF8.self).trimmingCharacters(in: .whitespaces)
    }

    private static func parent(of pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ").dropFirst().first.flatMap { Int32($0) }
    }

    static func forkServer(of agent: AgentRun) -> Int32? {
        children(of: agent.process.processIdentifier).first { commandLine(of: $0).contains("--fork-server") }
    }

    @Test func workersAreForkedAndBecomeTheSupervisorsChildren() throws {
        let agent = try AgentRun(settings: Self.settings, arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("ready in") }.count == 2, "\(agent.transcript)")
        let supervisor = agent.process.processIdentifier
        let server = try #require(Self.forkServer(of: agent), "no fork server among the children of agent-control")
        for name in ["one", "two"] {
            let pid = try #require(agent.workerPids(name).first)
            #expect(Self.parent(of: pid) == supervisor, "worker \(name) is not agent-control's child")
            #expect(Self.commandLine(of: pid) == "agent-worker --process \(name)", "ps shows \(Self.commandLine(of: pid))")
            // Forked, not exec'd: the worker runs the server's image.
            let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
            #expect(exe == (try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(server)/exe")))
        }
        // A worker it forked crashes: the supervisor sees its exit and restarts it.
        let first = try #require(agent.workerPids("one").first)
        kill(first, SIGKILL)
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[one] worker pid \(first) was killed by SIGKILL") } != nil, "\(agent.transcript)")
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("[one] ready in") }.count == 2, "\(agent.transcript)")
        #expect(agent.stop() == 0)
        #expect(!AgentRun.isAlive(server), "the fork server outlived agent-control")
    }

    @Test func theForkServerIgnoresStopSignalsMeantForTheSupervisorAndItsWorkersDoNot() throws {
        let agent = try AgentRun(settings: Self.settings, arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("ready in") }.count == 2, "\(agent.transcript)")
        let server = try #require(Self.forkServer(of: agent))
        for signal in [SIGTERM, SIGINT, SIGHUP] { kill(server, signal) }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(AgentRun.isAlive(server), "the fork server died of a stop signal")
        #expect(!agent.stderrLines.contains { $0.contains("the fork server") }, "\(agent.transcript)")
        // A worker forked after that still stops on SIGTERM like any worker.
        let first = try #require(agent.workerPids("one").first)
        kill(first, SIGKILL)
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("[one] ready in") }.count == 2, "\(agent.transcript)")
        let replacement = try #require(agent.workerPids("one").last)
        kill(replacement, SIGTERM)
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[one] worker pid \(replacement) exited with status 0") } != nil, "\(agent.transcript)")
        #expect(agent.stop() == 0)
        #expect(!AgentRun.isAlive(server))
    }

    /// Whether `pid` was forked by the fork server: a forked worker's command line was
    /// rewritten in the server's argument area (200 bytes and more, NUL-padded); a spawned
    /// worker's is just its own argv.
    private static func wasForked(_ pid: Int32) -> Bool {
        let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
        return data.count > 200 && data.starts(with: Array("agent-worker".utf8))
    }

    @Test func aDeadForkServerTakesNoWorkerWithItAndIsStartedAgain() throws {
        let agent = try AgentRun(settings: Self.settings, arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("ready in") }.count == 2, "\(agent.transcript)")
        let server = try #require(Self.forkServer(of: agent))
        let workers = agent.workerPids("one") + agent.workerPids("two")
        #expect(workers.allSatisfy(Self.wasForked), "the first workers were not forked")
        kill(server, SIGKILL)
        #expect(agent.waitForLine(onStderr: true) { $0.contains("the fork server (pid \(server)) was killed by SIGKILL; starting workers with posix_spawn until a new fork server is started in 0.5 s") } != nil, "\(agent.transcript)")
        #expect(workers.allSatisfy(AgentRun.isAlive), "a worker died with the fork server")
        let restarted = agent.waitForLine(onStderr: true, timeout: 30) { $0.contains("started a new fork server (pid ") }
        #expect(restarted?.contains("workers are forked again") == true, "\(agent.transcript)")
        let newServer = try #require(Self.forkServer(of: agent), "no fork server after the restart")
        #expect(newServer != server)
        // Status says so.
        let status = try JSONSerialization.jsonObject(with: Data(runProgram("agent-control", ["status", "--json", "--settings", agent.settingsFile]).stdout.utf8)) as? [String: Any]
        let forkServer = status?["fork_server"] as? [String: Any]
        #expect(forkServer?["pid"] as? Int == Int(newServer) && forkServer?["restarts"] as? Int == 1, "\(String(describing: status))")

        // Workers started from now on are forked again, and are the supervisor's children.
        let first = try #require(agent.workerPids("one").first)
        kill(first, SIGKILL)
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("[one] ready in") }.count == 2, "\(agent.transcript)")
        let replacement = try #require(agent.workerPids("one").last)
        #expect(Self.wasForked(replacement), "the replacement was spawned, not forked by the new server")
        #expect(Self.commandLine(of: replacement) == "agent-worker --process one")
        #expect(Self.parent(of: replacement) == agent.process.processIdentifier)
        #expect(agent.stop() == 0)
        #expect(!AgentRun.isAlive(newServer), "the new fork server outlived agent-control")
    }

    /// A stopped fork server (SIGSTOP) never answers: the request fails as soon as the server
    /// is found stopped (20 ms), not after the 5 s a running server is given, and the server is
    /// killed at once rather than asked to quit.
    @Test func aStoppedForkServerIsKilledAtOnceAndPosixSpawnStandsIn() throws {
        let agent = try AgentRun(settings: Self.settings, arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("ready in") }.count == 2, "\(agent.transcript)")
        let server = try #require(Self.forkServer(of: agent))
        kill(server, SIGSTOP)
        let first = try #require(agent.workerPids("one").first)
        kill(first, SIGKILL)
        let warning = agent.waitForLine(onStderr: true, timeout: 30) { $0.contains("through the fork server") && $0.contains("starting workers with posix_spawn until a new fork server is started") }
        #expect(warning?.contains("the fork server is stopped (by SIGSTOP or a debugger), and is killed") == true, "\(agent.transcript)")
        #expect(agent.waitForLines(onStderr: true, count: 2, timeout: 30) { $0.contains("[one] ready in") }.count == 2, "\(agent.transcript)")
        let replacement = try #require(agent.workerPids("one").last)
        // Started by posix_spawn, not by the stopped server: as a process of its own
        // (`--process one`) or as a spare that was adopted (`--spare …`, made the same way).
        #expect(!Self.wasForked(replacement), "\(agent.transcript)")
        let commandLine = Self.commandLine(of: replacement)
        #expect(commandLine == "agent-worker --process one" || commandLine.hasPrefix("agent-worker --spare "), "\(commandLine)")
        // The stopped server was killed and reaped; the other worker never noticed.
        #expect(!AgentRun.isAlive(server))
        #expect(agent.workerPids("two").allSatisfy(AgentRun.isAlive))
        #expect(agent.stop() == 0)
    }

    /// A fork server a debugger holds fails the request sent to it (it is found stopped) and
    /// is killed; its death, which only the debugger can reap first, holds neither the loop
    /// (status answers) nor the start of the replacement.
    @Test func aForkServerHeldByADebuggerDoesNotHoldTheLoop() throws {
        let debugger = try DebuggerHold.make()
        let agent = try AgentRun(settings: Self.settings, arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("ready in") }.count == 2, "\(agent.transcript)")
        let server = try #require(Self.forkServer(of: agent))
        try #require(debugger.hold(server) == 0, "the test could not trace the fork server")
        defer { debugger.release(server) }
        let first = try #require(agent.workerPids("one").first)
        kill(first, SIGKILL)
        #expect(agent.waitForLine(onStderr: true, timeout: 30) { $0.contains("the fork server is stopped (by SIGSTOP or a debugger), and is killed") } != nil, "\(agent.transcript)")
        #expect(agent.waitForLines(onStderr: true, count: 2, timeout: 30) { $0.contains("[one] ready in") }.count == 2, "\(agent.transcript)")
        let status = try runProgram("agent-control", ["status", "--json", "--settings", agent.settingsFile], timeout: 60)
        #expect(status.status == 0, "status: \(status.stderr)")
        // Once the debugger lets go, the dead server is reaped without anything else happening.
        debugger.release(server)
        let deadline = Date().addingTimeInterval(30)
        while access("/proc/\(server)", F_OK) == 0, Date() < deadline { usleep(20_000) }
        #expect(access("/proc/\(server)", F_OK) != 0, "the dead server was not reaped once the debugger let go: \(agent.transcript)")
        #expect(agent.stop() == 0)
    }

    @Test func agentForkServerZeroSpawnsEveryWorker() throws {
        let agent = try AgentRun(settings: Self.settings, arguments: ["--no-build", "--quiet"], environment: ["AGENT_FORK_SERVER": "0"])
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("ready in") }.count == 2, "\(agent.transcript)")
        #expect(Self.forkServer(of: agent) == nil)
        let pid = try #require(agent.workerPids("one").first)
        #expect(Self.commandLine(of: pid).hasSuffix("agent-worker --process one"))
        kill(pid, SIGKILL)
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("[one] ready in") }.count == 2, "\(agent.transcript)")
        #expect(agent.stop() == 0)
    }

    /// A fork server whose pid equals the upper half of pointers in its thread-local storage
    /// (tid caches are rewritten there in each worker; the pointers must not be): every worker
    /// it forked crashed at once. Without address randomisation (`setarch -R`) the mappings
    /// are at 0x7fff…, so the pid that collides is 32767, which a pid namespace of its own
    /// (ns_last_pid) gives the server whatever else the machine is starting.
    @Test(.enabled(if: Self.onX86_64, "the addresses without randomisation are x86-64's"))
    func workersStartWhenTheForkServersPidEqualsThePointersUpperHalf() throws {
        let target: Int32 = 0x7fff
        var last: Int32 = target - 2
        for _ in 0..<6 {
            let shell = #"exec unshare --pid --fork --mount-proc --kill-child setarch x86_64 -R sh -c 'echo \#(last) > /proc/sys/kernel/ns_last_pid && exec "$0" "$@"' "$0" "$@""#
            let agent = try AgentRun(settings: #"{"enabled_modules": ["faults"], "processes": {"one": {"type": "fault", "tick_ms": 200}}}"#,
                                     arguments: ["--no-build"], shell: shell)
            let started = agent.waitForLine(onStderr: true) { $0.contains("[one] started worker pid ") }
            let supervisor = Self.children(of: agent.process.processIdentifier).first
            // Stopped by its pid out here: `agent-control stop` would read the pidfile's pid of
            // the namespace (1) if the socket did not answer. Without it, the end of `unshare`
            // (AgentRun's deinit) takes the namespace down.
            defer {
                if let supervisor {
                    kill(supervisor, SIGTERM)
                    #expect(agent.waitForExit(timeout: 45) == 0, "\(agent.transcript)")
                }
            }
            let server = supervisor.flatMap { Self.children(of: $0).first { Self.commandLine(of: $0).contains("--fork-server") } }
            let inner = try #require(server.flatMap(Self.namespacePid), "no fork server in the namespace: \(agent.transcript)")
            guard inner == target else {
                // Another thread or process of the agent took the pids before it: aim again.
                last += target - inner
                continue
            }
            #expect(started != nil, "\(agent.transcript)")
            #expect(agent.waitForLine(onStderr: true) { $0.contains("[one] ready in") || $0.contains("SIGSEGV") }?.contains("ready in") == true,
                    "\(agent.transcript)")
            let worker = supervisor.flatMap { Self.children(of: $0).first { $0 != server } }
            #expect(worker.map(Self.wasForked) == true, "the worker was not forked by the server: \(agent.transcript)")
            return
        }
        Issue.record("the fork server never had pid \(target) in its namespace in 6 tries")
    }

    private static var onX86_64: Bool {
        #if arch(x86_64)
        true
        #else
        false
        #endif
    }

    /// The pid of `pid` in its own (innermost) pid namespace, from /proc/PID/status.
    private static func namespacePid(_ pid: Int32) -> Int32? {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        return status.split(separator: "\n").first { $0.hasPrefix("NSpid:") }?.split(separator: "\t").last.flatMap { Int32($0) }
    }
}
