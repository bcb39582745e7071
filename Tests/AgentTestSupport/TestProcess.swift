import CAgentSystem
import Foundation

/// A child process for the tests, with the part of Foundation's `Process` they use, spawned by
/// `agent_spawn_in` (the runtime's own posix_spawn: every other descriptor closed, signals
/// reset, a process group of its own as Foundation's). Not Foundation's: its `run()` on Linux
/// reads `/proc/self/fd` entries past the end of glibc's buffer (swift-corelibs-foundation
/// #5472, fixed after Swift 6.3.1) and killed a whole test run with SIGSEGV once in three runs
/// beside two CPU hogs (stop 52).
///
/// Each child is reaped the moment it ends, by a thread of its own blocked in `waitpid`, as
/// Foundation does: a child left a zombie stalls swift-testing's exit tests, whose waiter asks
/// `waitid(P_ALL, WNOWAIT)` and is answered with that zombie again and again (a whole run hung
/// so, stop 52).
package final class TestProcess: @unchecked Sendable {
    package var executableURL: URL?
    package var arguments: [String]?
    package var currentDirectoryURL: URL?
    /// nil: the test process's own environment.
    package var environment: [String: String]?
    /// A `Pipe` (the child gets one end, the other stays here) or a `FileHandle`
    /// (`FileHandle.nullDevice`: /dev/null); nil: stdin from /dev/null, stdout and stderr the
    /// test process's own.
    package var standardInput: Any?
    package var standardOutput: Any?
    package var standardError: Any?

    private let state = Locked(State())
    private let ended = DispatchSemaphore(value: 0)

    private struct State {
        var pid: pid_t = 0
        /// The wait status once the child was reaped; nil while it runs.
        var waitStatus: Int32?
        /// Reaped by someone else: ended, its status unknown.
        var unknown = false
    }

    package init() {}

    package var processIdentifier: Int32 { state.withLock { $0.pid } }

    /// Spawns the child; throws what `posix_spawn` said (a missing program, a folder it cannot
    /// enter).
    package func run() throws {
        guard let executable = executableURL?.path else { throw TestProcessError(description: "TestProcess: no executableURL") }
        guard processIdentifier == 0 else { throw TestProcessError(description: "TestProcess: \(executable) was started already") }
        let argv = [executable] + (arguments ?? [])
        let envp = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        // Foundation's null device has no descriptor: the child gets /dev/null of its own.
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { if null >= 0 { close(null) } }
        let input = Self.descriptor(standardInput, childReads: true, null: null)
        let output = Self.descriptor(standardOutput, childReads: false, null: null)
        let error = Self.descriptor(standardError, childReads: false, null: null)
        var child: pid_t = 0
        let status = withCStrings(argv) { cArguments in
            withCStrings(envp) { cEnvironment in
                // 1: the child leads a process group of its own, as Foundation's did (a kill of
                // "its" group never reaches the test process).
                if let directory = currentDirectoryURL?.path {
                    return agent_spawn_in(executable, cArguments, cEnvironment, input, output, error, -1, directory, 1, &child)
                }
                return agent_spawn(executable, cArguments, cEnvironment, input, output, error, -1, 1, &child)
            }
        }
        guard status == 0 else {
            throw TestProcessError(description: "cannot start \(executable): \(String(cString: strerror(status)))")
        }
        state.withLock { $0.pid = child }
        let spawned = child
        let waiter = Thread { [self] in reap(spawned) }
        waiter.stackSize = 64 << 10
        waiter.start()
        // As Foundation does: the child's ends of the pipes are the child's alone, so that a read
        // of its output ends when it does.
        try? (standardInput as? Pipe)?.fileHandleForReading.close()
        try? (standardOutput as? Pipe)?.fileHandleForWriting.close()
        try? (standardError as? Pipe)?.fileHandleForWriting.close()
    }

    /// Whether the child was started and has not ended.
    package var isRunning: Bool { state.withLock { $0.pid > 0 && $0.waitStatus == nil && !$0.unknown } }

    /// The exit code, or the signal that ended it (as Foundation's); -1 while it runs or when
    /// its status could not be read.
    package var terminationStatus: Int32 {
        guard let status = state.withLock({ $0.waitStatus }) else { return -1 }
        return Self.exited(status) ? (status >> 8) & 0xff : status & 0x7f
    }

    package var terminationReason: Process.TerminationReason {
        guard let status = state.withLock({ $0.waitStatus }) else { return .exit }
        return Self.exited(status) ? .exit : .uncaughtSignal
    }

    /// Blocks until the child has ended (tests bound their waits themselves: ``ProcessDeadline``).
    package func waitUntilExit() {
        guard processIdentifier > 0 else { return }
        ended.wait()
        ended.signal()
    }

    /// SIGTERM, as Foundation's.
    package func terminate() {
        let pid = processIdentifier
        if pid > 0, isRunning { kill(pid, SIGTERM) }
    }

    /// The waiter thread: blocks until the child ends and keeps its status.
    private func reap(_ pid: pid_t) {
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, 0) } while result < 0 && errno == EINTR
        state.withLock {
            if result == pid { $0.waitStatus = status } else { $0.unknown = true }
        }
        ended.signal()
    }

    private static func exited(_ status: Int32) -> Bool { status & 0x7f == 0 }

    private static func descriptor(_ stream: Any?, childReads: Bool, null: Int32) -> Int32 {
        if let pipe = stream as? Pipe { return childReads ? pipe.fileHandleForReading.fileDescriptor : pipe.fileHandleForWriting.fileDescriptor }
        if let handle = stream as? FileHandle { return handle.fileDescriptor >= 0 ? handle.fileDescriptor : null }
        // nil: stdin from /dev/null (agent_spawn's -1), stdout and stderr the test process's.
        return -1
    }

    private func withCStrings<T>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> T) -> T {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        return pointers.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
    }
}

/// A value behind a lock.
private final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// A child the tests could not start.
package struct TestProcessError: Error, CustomStringConvertible {
    package var description: String
}
