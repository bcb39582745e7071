import AgentCore
import AgentSupervision
import CAgentSystem
import Foundation

/// A real `agent-control console` launched by the bench, whose log (stderr) is read line by
/// line and timestamped on arrival: launch, each worker's start and readiness, stop.
final class ConsoleRun {
    /// One log line and when the bench read it (monotonic seconds).
    struct Line {
        var time: Double
        var text: String
    }

    let pid: pid_t
    /// Monotonic time just before the spawn.
    let launchedAt: Double
    private let logFD: Int32
    private let pidFD: Int32
    private var partial: [UInt8] = []
    private var buffer = [UInt8](repeating: 0, count: 64 << 10)
    private(set) var lines: [Line] = []
    /// Arrival times of "ready in" lines, in order.
    private(set) var readyTimes: [Double] = []
    /// Arrival times of "started worker pid" lines, in order.
    private(set) var startTimes: [Double] = []
    /// Worker pids in the order they were started.
    private(set) var workerPids: [Int32] = []
    /// Log lines at error level or that say a worker could not start.
    private(set) var errors: [String] = []
    private(set) var exitStatus: Int32?

    /// `extraEnvironment` is added to the bench's own for agent-control (e.g.
    /// `AGENT_FORK_SERVER=0`).
    init(environment: BenchEnvironment, settingsFile: String, extraEnvironment: [String: String] = [:]) throws {
        var fds: [Int32] = [0, 0]
        guard agent_pipe_cloexec(&fds) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
        let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(devNull); close(fds[1]) }
        launchedAt = Clock.now()
        let spawned = ProcessSpawner.spawn(
            path: environment.agentControl,
            arguments: ["agent-control", "console", "--settings", settingsFile, "--no-build", "--quiet"],
            environment: ProcessInfo.processInfo.environment.merging(extraEnvironment) { _, new in new },
            stdout: devNull, stderr: fds[1], channel: -1, newGroup: false)
        switch spawned {
        case .success(let pid): self.pid = pid
        case .failure(let error):
            close(fds[0])
            throw BenchError("\(error)")
        }
        logFD = fds[0]
        _ = fcntl(logFD, F_SETFL, fcntl(logFD, F_GETFL) | O_NONBLOCK)
        pidFD = agent_pidfd_open(pid)
    }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            _ = waitExit(timeout: 5)
        }
        for worker in workerPids where ProcFiles.isAlive(worker) { kill(worker, SIGKILL) }
        close(logFD)
        if pidFD >= 0 { close(pidFD) }
    }

    /// Reads the log until `condition` holds, the supervisor exits, or `timeout` passes.
    @discardableResult
    func wait(timeout: Double, until condition: () -> Bool) -> Bool {
        let deadline = Clock.now() + timeout
        while !condition() {
            let remaining = deadline - Clock.now()
            guard remaining > 0, exitStatus == nil else { return condition() }
            pump(maxWait: min(remaining, 0.5))
        }
        return true
    }

    /// Waits up to `maxWait` seconds for log output or the supervisor's exit, and reads it.
    func pump(maxWait: Double) {
        var fds = [pollfd(fd: logFD, events: Int16(POLLIN), revents: 0), pollfd(fd: pidFD, events: Int16(POLLIN), revents: 0)]
        let ready = poll(&fds, nfds_t(pidFD >= 0 ? 2 : 1), Int32(max(0, maxWait) * 1000))
        guard ready > 0 else { return }
        drainLog()
        if fds[1].revents != 0 { reap() }
    }

    private func drainLog() {
        while true {
            let n = buffer.withUnsafeMutableBytes { read(logFD, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return }
            let now = Clock.now()
            for byte in buffer[0..<n] {
                if byte == 10 {
                    handle(String(decoding: partial, as: UTF8.self), at: now)
                    partial.removeAll(keepingCapacity: true)
                } else {
                    partial.append(byte)
                }
            }
        }
    }

    private func handle(_ text: String, at time: Double) {
        lines.append(Line(time: time, text: text))
        if text.contains("] ready in ") {
            readyTimes.append(time)
        } else if let range = text.range(of: "] started worker pid ") {
            startTimes.append(time)
            if let pid = text[range.upperBound...].split(separator: " ").first.flatMap({ Int32($0) }) { workerPids.append(pid) }
        }
        if text.contains(" error ") || text.contains(" critical ") || text.contains("cannot start a worker") || text.hasPrefix("error:") {
            errors.append(text)
        }
    }

    private func reap() {
        guard exitStatus == nil else { return }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            drainLog()
            exitStatus = status
        }
    }

    /// Waits for the supervisor to exit; returns its exit status (raw, as from waitpid).
    func waitExit(timeout: Double) -> Int32? {
        wait(timeout: timeout) { exitStatus != nil }
        return exitStatus
    }

    /// Workers among `pids` still alive.
    static func alive(_ pids: [Int32]) -> [Int32] { pids.filter(ProcFiles.isAlive) }

    /// Sends `signal` to the supervisor and waits until it and every worker it started are
    /// gone. Returns the time that took in milliseconds (nil on timeout) and the workers left.
    func stop(signal: Int32, timeout: Double) -> (milliseconds: Double?, left: [Int32]) {
        let watched = ProcessWatch(pids: workerPids)
        let start = Clock.now()
        kill(pid, signal)
        let deadline = start + timeout
        var workersGone = false
        while Clock.now() < deadline {
            if !workersGone { workersGone = watched.waitAll(timeout: 0.005) }
            if exitStatus == nil { pump(maxWait: workersGone ? 0.05 : 0) }
            if workersGone, exitStatus != nil { break }
        }
        let elapsed = (Clock.now() - start) * 1000
        let left = Self.alive(workerPids)
        return (workersGone && exitStatus != nil ? elapsed : nil, left)
    }
}

/// Waits for processes that are not (necessarily) children to exit, through pidfds.
final class ProcessWatch {
    private var fds: [pollfd] = []

    init(pids: [Int32]) {
        for pid in pids {
            let fd = agent_pidfd_open(pid)
            if fd >= 0 { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
        }
    }

    deinit { for entry in fds { close(entry.fd) } }

    /// Waits up to `timeout` seconds; returns true once every process has exited.
    func waitAll(timeout: Double) -> Bool {
        let deadline = Clock.now() + timeout
        while !fds.isEmpty {
            let remaining = deadline - Clock.now()
            let ready = poll(&fds, nfds_t(fds.count), Int32(max(0, remaining) * 1000))
            if ready > 0 {
                for entry in fds where entry.revents != 0 { close(entry.fd) }
                fds.removeAll { $0.revents != 0 }
                for index in fds.indices { fds[index].revents = 0 }
            } else if remaining <= 0 {
                return false
            }
        }
        return true
    }
}
