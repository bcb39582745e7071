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
}
