import AgentCore
import AgentLoop
import Foundation

/// Waits on a process's pidfd (from `agent_pidfd_open`), which becomes readable when the
/// process exits: whether or not it is the caller's child, zombie or gone.
package enum PidFD {
    /// Waits up to `timeout` seconds for the process of `fd` to exit; whether it did. -1 (no
    /// pidfd) waits for nothing and says no.
    @discardableResult
    package static func awaitExit(_ fd: Int32, within timeout: Double) -> Bool {
        guard fd >= 0 else { return false }
        var exited = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let started = EventLoop.now()
        var ready: Int32
        repeat {
            ready = poll(&exited, 1, Saturating.pollTimeout(timeout - (EventLoop.now() - started)))
        } while ready < 0 && errno == EINTR
        return ready > 0
    }
}
