import CAgentSystem
import Foundation

/// A freshly spawned worker process and the supervisor's ends of its fds.
package struct LaunchedWorker {
    package var pid: pid_t
    package var channelFD: Int32
    package var stdoutFD: Int32
    package var stderrFD: Int32
    package var pidFD: Int32

    package init(pid: pid_t, channelFD: Int32, stdoutFD: Int32, stderrFD: Int32, pidFD: Int32) {
        self.pid = pid
        self.channelFD = channelFD
        self.stdoutFD = stdoutFD
        self.stderrFD = stderrFD
        self.pidFD = pidFD
    }

    /// The supervisor's ends, for closing.
    package var fds: [Int32] { [channelFD, stdoutFD, stderrFD, pidFD] }

    /// Makes a socketpair and two output pipes, has `start` start a worker with their child
    /// ends (then closed here), and returns the worker with the supervisor's ends.
    package static func launch(_ start: (_ channel: Int32, _ stdout: Int32, _ stderr: Int32) -> Result<pid_t, ProcessSpawner.SpawnError>) -> Result<LaunchedWorker, ProcessSpawner.SpawnError> {
        var channel: [Int32] = [0, 0]
        var stdout: [Int32] = [0, 0]
        var stderr: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &channel) == 0 else {
            return .failure(ProcessSpawner.SpawnError(path: "socketpair", errno: errno))
        }
        guard agent_pipe_cloexec(&stdout) == 0 else {
            let code = errno
            close(channel[0]); close(channel[1])
            return .failure(ProcessSpawner.SpawnError(path: "pipe", errno: code))
        }
        guard agent_pipe_cloexec(&stderr) == 0 else {
            let code = errno
            close(channel[0]); close(channel[1]); close(stdout[0]); close(stdout[1])
            return .failure(ProcessSpawner.SpawnError(path: "pipe", errno: code))
        }
        let result = start(channel[1], stdout[1], stderr[1])
        close(channel[1])
        close(stdout[1])
        close(stderr[1])
        switch result {
        case .success(let pid):
            for fd in [channel[0], stdout[0], stderr[0]] { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
            return .success(LaunchedWorker(pid: pid, channelFD: channel[0], stdoutFD: stdout[0], stderrFD: stderr[0], pidFD: agent_pidfd_open(pid)))
        case .failure(let error):
            close(channel[0]); close(stdout[0]); close(stderr[0])
            return .failure(error)
        }
    }

    /// Each worker costs the supervisor four descriptors (socket, two output pipes, pidfd): lift
    /// the soft limit to the hard one so that hundreds of workers fit.
    package static func raiseFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
