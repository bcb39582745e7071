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
    /// The libraries asked to be loaded into the server, each with its identity then
    /// (``ModuleDescriber/identity(_:)``).
    private(set) var preloads: [String: String] = [:]
    /// Libraries whose load the server has not answered yet, first asked first.
    package private(set) var pendingPreloads: [String] = []
    /// What the first of ``pendingPreloads`` did that ended the server, when it said so.
    package private(set) var loadFailure: String?

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
            environment: SupervisorConfiguration.workerEnvironment(environment),
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

    /// What a failed request says it could not start.
    package static let requestDescription = "a worker through the fork server"

    /// Whether requests can still be sent.
    public var isRunning: Bool { controlFD >= 0 }

    /// Forks a worker with `arguments` (without the program name), `channel` as its fd 3,
    /// `stdout` and `stderr` as its fds 1 and 2. Blocks until the server replies (a fork or two:
    /// well under a millisecond) or `timeout` passes.
    package func spawn(arguments: [String], channel: Int32, stdout: Int32, stderr: Int32, timeout: Double = 5) -> Result<pid_t, ProcessSpawner.SpawnError> {
        guard controlFD >= 0 else { return .failure(ProcessSpawner.SpawnError(path: "the fork server", errno: EPIPE)) }
        guard agent_set_child_subreaper() == 0 else {
            return .failure(ProcessSpawner.SpawnError(path: "prctl(PR_SET_CHILD_SUBREAPER)", errno: errno))
        }
        if let failed = awaitPreloads(timeout: timeout) { return .failure(failed) }
        let payload = Array(arguments.joined(separator: "\0").utf8)
        var pid: pid_t = 0
        let rc = payload.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) {
                agent_fork_server_request(controlFD, $0.baseAddress, $0.count, channel, stdout, stderr, Saturating.pollTimeout(timeout), &pid)
            }
        }
        guard rc == 0 else { return .failure(ProcessSpawner.SpawnError(path: Self.requestDescription, errno: rc)) }
        return .success(pid)
    }

    /// Stops the server: asked to quit (an end of file alone means that the supervisor died,
    /// and a server in the agent's cgroup then kills the cgroup), it exits; SIGKILL after
    /// `timeout`. Reaps it.
    public func shutDown(timeout: Double = 1) {
        if controlFD >= 0 { _ = agent_fork_server_quit(controlFD) }
        closeControl()
        if pidFD >= 0 {
            var exited = pollfd(fd: pidFD, events: Int16(POLLIN), revents: 0)
            while poll(&exited, 1, Saturating.pollTimeout(timeout)) < 0, errno == EINTR {}
        }
        var status: Int32 = 0
        // 0: still running (-1: already reaped, its pid no longer ours to signal).
        if waitpid(pid, &status, WNOHANG) == 0 {
            Glibc.kill(pid, SIGKILL)
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
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
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return ProcessSpawner.exitCode(status).map { "exited with status \($0)" }
            ?? "was killed by \(SignalName.of(ProcessSpawner.termSignal(status)))"
    }

    // MARK: - Module libraries loaded into the server
    //
    // Module libraries loaded into the fork server before it forks: each worker forked after
// inherits its module mapped, relocated and checked instead of loading it (about two thirds of
// a forked worker's start), and the workers share those pages.
//
// A load is asked without waiting (`preload`); its answer is read before the next fork
// request, which the server handles after it anyway. A library whose constructors leave a
// thread behind ends the server (it could no longer fork safely): the supervisor starts a new
// one that does not load it. `AGENT_FORK_SERVER_PRELOAD=0` turns the loads off.
    /// Whether the environment turns the loads off (`AGENT_FORK_SERVER_PRELOAD=0`).
    package static func preloadDisabled(in environment: [String: String]) -> Bool {
        SupervisorConfiguration.switchedOff("AGENT_FORK_SERVER_PRELOAD", in: environment)
    }

    /// Asks the server to load each of `libraries` it has not been asked to load (jsonl/1
    /// manifests and built-in modules are not libraries and are skipped). Does not wait.
    package func preload(_ libraries: [String]) {
        for library in libraries where preloads[library] == nil && library.hasPrefix("/") && !ModuleManifest.isProgramManifest(library) {
            guard controlFD >= 0 else { return }
            let identity = ModuleDescriber.identity(library)
            guard !identity.isEmpty else { continue }
            let rc = Array(library.utf8).withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { agent_fork_server_preload_request(controlFD, $0.baseAddress, $0.count) }
            }
            guard rc == 0 else { continue }
            preloads[library] = identity
            pendingPreloads.append(library)
        }
    }

    /// Whether a worker of `library` forked now would get the library as it is on disk: false
    /// when the server loaded it and the file has changed since (a rebuilt module: a `dlopen`
    /// of the same path in a forked worker would return the server's old copy).
    package func hasCurrent(_ library: String) -> Bool {
        guard let identity = preloads[library] else { return true }
        return ModuleDescriber.identity(library) == identity
    }

    /// What a load changed in the server, by its answer (the server then ends).
    private static let loadChanges: [Int32: String] = [
        Int32(AGENT_FORK_SERVER_LOAD_THREADS): "started a thread (a fork server must stay single-threaded)",
        Int32(AGENT_FORK_SERVER_LOAD_UMASK): "changed the umask",
        Int32(AGENT_FORK_SERVER_LOAD_SIGNAL_MASK): "changed the signal mask",
        Int32(AGENT_FORK_SERVER_LOAD_SIGNAL_HANDLER): "changed a signal's handler",
        Int32(AGENT_FORK_SERVER_LOAD_DESCRIPTORS): "replaced one of the descriptors 0 to 3",
        Int32(AGENT_FORK_SERVER_LOAD_FOLDER): "changed the working folder",
        Int32(AGENT_FORK_SERVER_LOAD_ENVIRONMENT): "changed the environment",
    ]

    /// Reads the answers to the loads asked so far. Nil when every load was answered (loaded or
    /// not: a library the server could not load, the worker loads and reports itself); the
    /// error when the server is gone, silent past `timeout`, or ending because a library changed
    /// what its workers would inherit — ``pendingPreloads`` then starts with that library.
    func awaitPreloads(timeout: Double) -> ProcessSpawner.SpawnError? {
        while let library = pendingPreloads.first {
            var answer: Int32 = 0
            let rc = agent_fork_server_reply(controlFD, Saturating.pollTimeout(timeout), &answer)
            guard rc == 0 else { return ProcessSpawner.SpawnError(path: Self.requestDescription, errno: rc) }
            if let change = Self.loadChanges[answer] {
                let failure = "the module library \(library) \(change) when the fork server loaded it, which every worker forked after would inherit"
                loadFailure = failure
                return ProcessSpawner.SpawnError(path: Self.requestDescription, errno: EDEADLK, reason: failure)
            }
            pendingPreloads.removeFirst()
        }
        return nil
    }
}
