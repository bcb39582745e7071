import AgentCore
import AgentLoop
import CAgentSystem
import Foundation

/// A single-threaded `agent-worker --fork-server` that forks workers on the supervisor's
/// request. A forked worker skips exec, dynamic linking and the Swift runtime's start-up, and
/// shares the server's relocated pages with its siblings: it is ready sooner and costs less
/// memory than one started with posix_spawn.
///
/// The server forks each worker twice so that the worker is reparented to the supervisor (a
/// child subreaper): the supervisor waits for it, kills its process group and sees its exit
/// status exactly as for a worker it spawned itself, and the server's own death takes no
/// worker with it. When the server dies or fails, the supervisor starts workers with
/// posix_spawn until it has started a new server (with backoff; see `Supervisor+ForkServer`).
/// `AGENT_FORK_SERVER=0` in the environment turns it off.
public final class ForkServer {
    /// The server's pid (a child of the process that started it).
    public let pid: pid_t
    /// A pidfd of the server (readable when it exits), or -1.
    package private(set) var pidFD: Int32
    private var controlFD: Int32

    private init(pid: pid_t, controlFD: Int32, pidFD: Int32) {
        self.pid = pid
        self.controlFD = controlFD
        self.pidFD = pidFD
    }

    /// Whether the environment turns the fork server off (`AGENT_FORK_SERVER=0`).
    public static func isDisabled(in environment: [String: String]) -> Bool {
        SupervisorConfiguration.switchedOff("AGENT_FORK_SERVER", in: environment)
    }

    /// Starts a fork server. Call it from the thread that will run the supervisor: the server's
    /// parent-death signal follows that thread. The calling process becomes a child subreaper
    /// at the first worker (without it forked workers could not be its children), not before:
    /// what runs until then (`swift build`, `--describe`) keeps its usual orphan handling.
    /// `cgroup`: the workers' cgroup folder, open, which the server starts in (-1: the caller's).
    public static func start(workerPath: String, environment: [String: String], cgroup: Int32 = -1) -> Result<ForkServer, ProcessSpawner.SpawnError> {
        var control: [Int32] = [0, 0]
        guard agent_seqpacket_pair(&control) == 0 else {
            return .failure(ProcessSpawner.SpawnError(path: "socketpair", errno: errno))
        }
        let spawned = ProcessSpawner.spawn(
            // The blank argument is room for each worker's own command line (`ps` shows
            // `agent-worker --process NAME`).
            path: workerPath, arguments: ["agent-worker", "--fork-server", String(repeating: " ", count: 200)],
            environment: serverEnvironment(environment),
            stdout: -1, stderr: -1, channel: control[1], newGroup: true, cgroup: cgroup)
        close(control[1])
        switch spawned {
        case .success(let pid):
            return .success(ForkServer(pid: pid, controlFD: control[0], pidFD: agent_pidfd_open(pid)))
        case .failure(let error):
            close(control[0])
            return .failure(error)
        }
    }

    /// The switch that has the server's loader bind every library's symbols at its start.
    public static let bindNowKey = "AGENT_FORK_SERVER_BIND_NOW"

    /// The workers' environment, and with `AGENT_FORK_SERVER_BIND_NOW=1` (unless the user set
    /// `LD_BIND_NOW` already) `LD_BIND_NOW=1` for the server alone, which removes it at once.
    /// A forked worker then inherits bound symbols instead of binding each one it calls at
    /// its first call (a symbol lookup, page faults on the libraries' symbol tables, a copy of
    /// the page it writes): 0.19–0.27 ms less CPU per worker's start, ~40 kB less private
    /// memory per worker; the server's load takes ~2 ms longer, which the first worker waits
    /// for (benchmarks/HISTORY.md, stop 75). Off by default for that trade.
    static func serverEnvironment(_ environment: [String: String]) -> [String: String] {
        var server = SupervisorConfiguration.workerEnvironment(environment)
        // The marker is the server's to read: one the user set would have it remove theirs.
        server[WorkerMain.bindNowAddedKey] = nil
        if EnvironmentSwitch.isOn(environment[bindNowKey]), server["LD_BIND_NOW"] == nil {
            server["LD_BIND_NOW"] = "1"
            server[WorkerMain.bindNowAddedKey] = "1"
        }
        return server
    }

    /// What a failed request says it could not start.
    package static let requestDescription = "a worker through the fork server"

    /// Whether requests can still be sent.
    public var isRunning: Bool { controlFD >= 0 }

    /// Forks a worker with `arguments` (without the program name), `channel` as its fd 3,
    /// `stdout` and `stderr` as its fds 1 and 2. Blocks until the server replies (a fork or two:
    /// well under a millisecond) or `timeout` passes; a server found stopped (SIGSTOP, a
    /// debugger) fails the request after 20 ms (EHOSTDOWN). `refused` hears, once per library,
    /// why the zygote of the library the request names is not used.
    package func spawn(arguments: [String], channel: Int32, stdout: Int32, stderr: Int32, timeout: Double = 5,
                       refused: (ZygoteRefusal) -> Void = { _ in }) -> Result<pid_t, ProcessSpawner.SpawnError> {
        guard controlFD >= 0 else { return .failure(ProcessSpawner.SpawnError(path: "the fork server", errno: EPIPE)) }
        guard agent_set_child_subreaper() == 0 else {
            return .failure(ProcessSpawner.SpawnError(path: "prctl(PR_SET_CHILD_SUBREAPER)", errno: errno))
        }
        let payload = Array(arguments.joined(separator: "\0").utf8)
        var pid: pid_t = 0
        var refusal: Int32 = 0
        let rc = payload.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) {
                agent_fork_server_request(controlFD, self.pid, $0.baseAddress, $0.count, channel, stdout, stderr, Saturating.pollTimeout(timeout), &pid, &refusal)
            }
        }
        if refusal > 0 { refused(ZygoteRefusal(code: refusal)) }
        guard rc == 0 else { return .failure(ProcessSpawner.SpawnError(path: Self.requestDescription, errno: rc)) }
        return .success(pid)
    }

    /// Stops the server: asked to quit (an end of file alone means that the supervisor died,
    /// and a server in the agent's cgroup then kills the cgroup), it exits; SIGKILL after
    /// `timeout`. Reaps it.
    public func shutDown(timeout: Double = 1) {
        if controlFD >= 0 { _ = agent_fork_server_quit(controlFD) }
        closeControl()
        // A stopped server reads no quit: it is killed at once, not after the timeout.
        if ProcStat.isStopped(pid) { Glibc.kill(pid, SIGKILL) }
        PidFD.awaitExit(pidFD, within: timeout)
        var status: Int32 = 0
        // 0: still running (-1: already reaped, its pid no longer ours to signal).
        if waitpid(pid, &status, WNOHANG) == 0 {
            Glibc.kill(pid, SIGKILL)
            // Not a blocking wait: a debugger holding the server reaps it first, whenever it
            // lets go (a traced zombie stays unreapable for its parent until then). The sweep
            // of the supervisor's children reaps it later.
            PidFD.awaitExit(pidFD, within: 1)
            _ = waitpid(pid, &status, WNOHANG)
        }
        closePidFD()
    }

    private func closeControl() {
        if controlFD >= 0 { close(controlFD) }
        controlFD = -1
    }

    private func closePidFD() {
        if pidFD >= 0 { close(pidFD) }
        pidFD = -1
    }

    /// The server died on its own: close the control socket and reap it. Returns how it ended.
    package func reapAfterDeath() -> String {
        closeControl()
        closePidFD()
        var status: Int32 = 0
        // Not a blocking wait (see shutDown): a debugger may hold the dead server.
        guard waitpid(pid, &status, WNOHANG) == pid else { return "ended (a debugger holds it: it is reaped once the debugger lets go)" }
        return ProcessSpawner.exitCode(status).map { "exited with status \($0)" }
            ?? "was killed by \(SignalName.of(ProcessSpawner.termSignal(status)))"
    }
}
