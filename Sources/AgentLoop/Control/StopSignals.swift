import CAgentSystem
import Foundation

/// SIGINT, SIGTERM, SIGHUP, SIGUSR1 and the stray signals (``stray``) caught into a pipe while an agent prepares (builds and describes
/// its modules), so that a stop request ends the preparation cleanly (the build or the
/// describe workers killed, the reason said) instead of killing the process where it stands.
/// The supervisor takes the pipe over, so no signal is lost in between.
public final class StopSignals {
    /// The pipe's read end (non-blocking); -1 if it could not be made.
    public private(set) var fd: Int32
    /// The SIGINT or SIGTERM read from the pipe, once one was.
    public private(set) var received: Int32?

    /// Signals whose default action ends a process and that mean nothing to an agent: caught
    /// and said, not obeyed. A module's worker is the supervisor's child (and a program is told
    /// its pid): `kill(getppid(), SIGUSR2)` ended the agent without a word. A caught signal's
    /// handler is reset at `exec`: workers and commands get the defaults.
    public static let stray: [Int32] = [SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSTKFLT, SIGXCPU, SIGXFSZ]

    /// Installs the handlers (and unblocks the signals, which a parent may have blocked).
    public init() {
        // SIGUSR1 (reopen the log) is caught too: its default action would end the agent.
        let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGUSR1] + Self.stray
        fd = signals.withUnsafeBufferPointer { agent_signal_pipe($0.baseAddress, Int32($0.count)) }
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Reads what is waiting: true once a SIGINT or SIGTERM came (a SIGHUP has nothing to
    /// reload yet and is dropped; so is a SIGUSR1, the supervisor reopening a moved log file
    /// when it starts).
    @discardableResult
    public func check() -> Bool {
        guard received == nil, fd >= 0 else { return received != nil }
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1 {
            if Int32(byte) == SIGINT || Int32(byte) == SIGTERM {
                received = Int32(byte)
                break
            }
        }
        return received != nil
    }

    /// Waits up to `seconds` for a signal; true once a stop signal came.
    public func wait(seconds: Double) -> Bool {
        guard !check(), fd >= 0 else { return received != nil }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&poller, 1, Int32(max(0, min(seconds, 3600)) * 1000))
        return check()
    }

    /// Hands the pipe to its next owner (the supervisor), which closes it.
    public func takeFD() -> Int32 {
        defer { fd = -1 }
        return fd
    }
}
