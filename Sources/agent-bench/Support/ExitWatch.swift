import AgentSupervision
import CAgentSystem
import Foundation

/// When the kernel finished ending a process: a thread of the bench waits in poll on the
/// process's pidfd and stamps the moment it wakes. So a restart's first step splits into the
/// kernel's part (SIGKILL → the exit complete, plus the watcher's own wake-up: some µs on a quiet
/// machine, milliseconds on a loaded one, so read it on a quiet one) and the
/// supervisor's (→ its loop woke and reaped). The watcher used to spin (poll with no timeout):
/// on two cores that took one from the dying worker's threads, which must each run to end,
/// and the kernel's part read 3.2 ms against 1.1 ms for the whole step (stop 53).
final class ExitWatch: @unchecked Sendable {
    private let pidFD: Int32
    private let done = DispatchSemaphore(value: 0)
    private let armed = DispatchSemaphore(value: 0)
    /// Written by the watcher before it signals `done`; read only after.
    private var exitedAt = 0.0

    /// Starts watching `pid` (a child of the bench or of its supervisor); nil when no pidfd
    /// could be opened for it.
    init?(pid: pid_t, deadline seconds: Double = 10) {
        pidFD = agent_pidfd_open(pid)
        guard pidFD >= 0 else { return nil }
        let fd = pidFD
        let thread = Thread { [self] in
            let giveUp = Clock.now() + seconds
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            armed.signal()
            while true {
                let left = giveUp - Clock.now()
                guard left > 0 else { break }
                // Readiness is kept: an exit complete before poll is entered is seen at once.
                if poll(&entry, 1, Int32(min(left * 1000, 1000).rounded(.up))) == 1, entry.revents & Int16(POLLIN) != 0 {
                    exitedAt = Clock.now()
                    break
                }
            }
            done.signal()
        }
        thread.start()
        // Started before the caller kills: else a slow thread start would count as the kernel's.
        armed.wait()
    }

    deinit { close(pidFD) }

    /// The monotonic time the process's exit completed (nil if not within the deadline).
    func exited() -> Double? {
        done.wait()
        done.signal()
        return exitedAt > 0 ? exitedAt : nil
    }

    /// SIGKILL → exit complete of a process that does nothing: `/bin/sleep`, spawned by the bench
    /// and killed once it sleeps. The kernel's floor under any restart's first step.
    static func bareProcessFloor() -> Double? {
        var pid: pid_t = 0
        let arguments = ["sleep", "60"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        guard posix_spawn(&pid, "/bin/sleep", nil, nil, &argv, environ) == 0 else { return nil }
        defer {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        let asleep = Clock.now() + 5
        while Clock.now() < asleep, !isSleeping(pid) { usleep(200) }
        guard let watch = ExitWatch(pid: pid) else { kill(pid, SIGKILL); return nil }
        let killedAt = Clock.now()
        kill(pid, SIGKILL)
        return watch.exited().map { ($0 - killedAt) * 1000 }
    }

    /// SIGKILL → exit complete of a worker that has started but does no work: `agent-worker
    /// --spare` of the bench module, spawned by the bench with a socketpair as its channel and
    /// killed once it waits for its start frame (the Swift runtime, Foundation and the module
    /// loaded, one thread). What the kernel needs to end a process with a worker's libraries
    /// mapped: the floor under the kernel's part of a worker's exit, as /bin/sleep is the floor
    /// under any process's.
    static func spareWorkerFloor(_ environment: BenchEnvironment) -> Double? {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { return nil }
        // Our end stays open (no end of file for the spare) until the spare is gone.
        defer { close(pair[0]) }
        let spawned = ProcessSpawner.spawn(
            path: environment.agentWorker,
            arguments: ["agent-worker", "--spare", environment.library("bench"), "--module", "bench"],
            environment: ProcessInfo.processInfo.environment, stdout: 2, stderr: 2, channel: pair[1], newGroup: false)
        close(pair[1])
        guard case .success(let pid) = spawned else { return nil }
        defer {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        let waiting = Clock.now() + 10
        let module = environment.library("bench")
        while Clock.now() < waiting, !isReadingChannel(pid, module: module) { usleep(1000) }
        guard isReadingChannel(pid, module: module), let watch = ExitWatch(pid: pid) else { kill(pid, SIGKILL); return nil }
        let killedAt = Clock.now()
        kill(pid, SIGKILL)
        return watch.exited().map { ($0 - killedAt) * 1000 }
    }

    /// Whether the process is blocked reading fd 3 (/proc/PID/syscall: recvmsg or read, first
    /// argument 3) with the module mapped: a spare that has loaded it and waits for the start
    /// frame (a spare whose load failed waits too, without it).
    private static func isReadingChannel(_ pid: pid_t, module: String) -> Bool {
        #if arch(x86_64)
        let reads: Set<Substring> = ["47", "0"]
        #else
        let reads: Set<Substring> = ["212", "63"]
        #endif
        guard let fields = ProcFiles.read("/proc/\(pid)/syscall")?.split(separator: " "), fields.count > 1,
              reads.contains(fields[0]), fields[1] == "0x3" else { return false }
        return ProcFiles.read("/proc/\(pid)/maps")?.contains(module) == true
    }

    /// Whether the process is asleep in the kernel (state S in /proc/PID/stat): `sleep` has
    /// exec'd and is waiting.
    private static func isSleeping(_ pid: pid_t) -> Bool {
        guard let stat = ProcFiles.read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return false }
        let rest = stat[stat.index(after: close)...].drop(while: { $0 == " " })
        return rest.first == "S" && (ProcFiles.read("/proc/\(pid)/comm") ?? "").hasPrefix("sleep")
    }
}
