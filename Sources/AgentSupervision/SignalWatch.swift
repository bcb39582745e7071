import AgentLoop
import CAgentSystem
import Foundation
import Logging

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

    private let logger: Logger
    /// When each stray signal was last said (once a second at most: a module may send many).
    private var straySaid: [Int32: Double] = [:]
    /// When a SIGHUP (a reload) was last passed on, and whether one waits for its turn: a
    /// flood of them made 57,000 reloads in 4 s, and their log lines filled every rotated log.
    private var hangupPassed = -Double.infinity
    private var hangupWaits = false

    package init(loop: EventLoop, logger: Logger) {
        self.loop = loop
        self.logger = logger
    }

    /// Installs handlers for `signals` (unless a pipe was taken over) and calls `received` on
    /// the loop with each signal. Returns the problem if they cannot be installed.
    package func watch(_ signals: [Int32], received: @escaping (Int32) -> Void) -> String? {
        if signalFD < 0 {
            let caught = signals + StopSignals.stray
            signalFD = caught.withUnsafeBufferPointer { agent_signal_pipe($0.baseAddress, Int32($0.count)) }
        }
        guard signalFD >= 0 else { return String(cString: strerror(errno)) }
        let fd = signalFD
        loop.register(fd) { [unowned self] _ in
            var byte: UInt8 = 0
            while read(fd, &byte, 1) == 1 {
                let signal = Int32(byte)
                if StopSignals.stray.contains(signal) {
                    strayReceived(signal)
                } else if signal == SIGHUP {
                    hangup(received)
                } else {
                    received(signal)
                }
            }
        }
        return nil
    }

    /// SIGHUP passed on at most once a second; those in between make one more, at its turn.
    private func hangup(_ received: @escaping (Int32) -> Void) {
        let now = EventLoop.now()
        if now - hangupPassed >= 1 {
            hangupPassed = now
            return received(SIGHUP)
        }
        guard !hangupWaits else { return }
        hangupWaits = true
        loop.schedule(after: hangupPassed + 1 - now) { [unowned self] in
            hangupWaits = false
            hangupPassed = EventLoop.now()
            received(SIGHUP)
        }
    }

    /// A stray signal (``StopSignals/stray``): said, at most once a second each.
    private func strayReceived(_ signal: Int32) {
        let now = EventLoop.now()
        guard now - (straySaid[signal] ?? -.infinity) >= 1 else { return }
        straySaid[signal] = now
        logger.warning("\(SignalName.of(signal)) received (from a process of this user, a module's perhaps, or from the kernel for a limit); ignored — its default action would have ended the agent")
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
