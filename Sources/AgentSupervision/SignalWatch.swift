import AgentLoop
import CAgentSystem
import Foundation

/// The supervisor's signals as loop events: the signal pipe (SIGINT, SIGTERM, SIGHUP,
/// SIGUSR1) and a signalfd for SIGCHLD.
@LoopActor
package final class SignalWatch {
    /// The signal pipe; one installed before the supervisor runs (by the launcher, so that no
    /// signal is lost in between) is taken over.
    package var signalFD: Int32 = -1
    /// A signalfd for SIGCHLD: workers stopped or continued by a signal.
    private var childSignalFD: Int32 = -1
    private let loop: EventLoop

    package init(loop: EventLoop) {
        self.loop = loop
    }

    /// Installs handlers for `signals` (unless a pipe was taken over) and calls `received` on
    /// the loop with each signal. Returns the problem if they cannot be installed.
    package func watch(_ signals: [Int32], received: @escaping (Int32) -> Void) -> String? {
        if signalFD < 0 {
            signalFD = signals.withUnsafeBufferPointer { agent_signal_pipe($0.baseAddress, Int32($0.count)) }
        }
        guard signalFD >= 0 else { return String(cString: strerror(errno)) }
        let fd = signalFD
        loop.register(fd) { _ in
            var byte: UInt8 = 0
            while read(fd, &byte, 1) == 1 { received(Int32(byte)) }
        }
        return nil
    }

    /// Calls `changed` on the loop after SIGCHLD. SIGCHLD must be blocked in every thread for
    /// the signalfd to see it: the caller blocks it before it starts threads (as
    /// `agent-control` does); it is blocked here for this thread. Returns the problem if the
    /// signalfd cannot be made.
    package func watchChildren(_ changed: @escaping () -> Void) -> String? {
        let signals: [Int32] = [SIGCHLD]
        _ = signals.withUnsafeBufferPointer { agent_block_signals($0.baseAddress, Int32($0.count)) }
        childSignalFD = signals.withUnsafeBufferPointer { agent_signalfd($0.baseAddress, Int32($0.count)) }
        guard childSignalFD >= 0 else { return "signalfd: \(String(cString: strerror(errno)))" }
        let fd = childSignalFD
        loop.register(fd) { _ in
            while agent_signalfd_read(fd) > 0 {}
            changed()
        }
        return nil
    }

    /// SIGCHLD goes back to how the thread had it (unblocked).
    package func unwatchChildren() {
        guard childSignalFD >= 0 else { return }
        loop.unregister(childSignalFD)
        close(childSignalFD)
        childSignalFD = -1
        let signals: [Int32] = [SIGCHLD]
        _ = signals.withUnsafeBufferPointer { agent_unblock_signals($0.baseAddress, Int32($0.count)) }
    }
}
