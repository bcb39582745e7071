import CAgentSystem
import Foundation

/// A child process for the tests, with the part of Foundation's `Process` they use, spawned by
/// `agent_spawn_in` (the runtime's own posix_spawn: every other descriptor closed, signals
/// reset). Not Foundation's: its `run()` on Linux reads `/proc/self/fd` entries past the end
/// of glibc's buffer (swift-corelibs-foundation #5472, fixed after Swift 6.3.1) and killed a
/// whole test run with SIGSEGV once in three runs beside two CPU hogs (stop 52).
package final class TestProcess: @unchecked Sendable {
    package var executableURL: URL?
    package var arguments: [String]?
    package var currentDirectoryURL: URL?
    /// nil: the test process's own environment.
    package var environment: [String: String]?
    /// A `Pipe` (the child gets one end, the other stays here) or a `FileHandle`; nil: stdin
    /// from /dev/null, stdout and stderr the test process's own.
    package var standardInput: Any?
    package var standardOutput: Any?
    package var standardError: Any?

    private let lock = NSLock()
    private var pid: pid_t = 0
    /// The wait status once the child was reaped.
    private var waitStatus: Int32?

    package init() {}

    package var processIdentifier: Int32 { lock.withLock { pid } }

    /// Spawns the child; throws what `posix_spawn` said (a missing program, a folder it cannot
    /// enter).
    package func run() throws {
        guard let executable = executableURL?.path else { throw TestProcessError(description: "TestProcess: no executableURL") }
        let argv = [executable] + (arguments ?? [])
        let envp = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        // -1: agent_spawn gives the child /dev/null.
        let input = (standardInput as? FileHandle) === FileHandle.nullDevice ? -1 : Self.descriptor(standardInput, childReads: true)
        let output = Self.descriptor(standardOutput, childReads: false)
        let error = Self.descriptor(standardError, childReads: false)
        var child: pid_t = 0
        let status = withCStrings(argv) { cArguments in
            withCStrings(envp) { cEnvironment in
                if let directory = currentDirectoryURL?.path {
                    return agent_spawn_in(executable, cArguments, cEnvironment, input, output, error, -1, directory, 0, &child)
                }
                return agent_spawn(executable, cArguments, cEnvironment, input, output, error, -1, 0, &child)
            }
        }
        guard status == 0 else {
            throw TestProcessError(description: "cannot start \(executable): \(String(cString: strerror(status)))")
        }
        lock.withLock { pid = child }
        // As Foundation does: the child's ends of the pipes are the child's alone, so that a read
        // of its output ends when it does.
        try? (standardInput as? Pipe)?.fileHandleForReading.close()
        try? (standardOutput as? Pipe)?.fileHandleForWriting.close()
        try? (standardError as? Pipe)?.fileHandleForWriting.close()
    }

    /// Whether the child has not ended (it is reaped here once it has).
    package var isRunning: Bool { lock.withLock { reap(blocking: false) == nil && pid > 0 } }

    /// The exit code, or the signal that ended it (as Foundation's); -1 while it runs.
    package var terminationStatus: Int32 {
        guard let status = lock.withLock({ reap(blocking: false) }) else { return -1 }
        return Self.exited(status) ? (status >> 8) & 0xff : status & 0x7f
    }

    package var terminationReason: Process.TerminationReason {
        guard let status = lock.withLock({ reap(blocking: false) }) else { return .exit }
        return Self.exited(status) ? .exit : .uncaughtSignal
    }

    /// Blocks until the child has ended (tests bound their waits themselves: ``ProcessDeadline``).
    package func waitUntilExit() {
        lock.withLock { _ = reap(blocking: true) }
    }

    /// SIGTERM, as Foundation's.
    package func terminate() {
        let pid = processIdentifier
        if pid > 0, isRunning { kill(pid, SIGTERM) }
    }

    /// The wait status once the child has ended; the lock held.
    private func reap(blocking: Bool) -> Int32? {
        if let waitStatus { return waitStatus }
        guard pid > 0 else { return nil }
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, blocking ? 0 : WNOHANG)
            if result == pid { waitStatus = status; return status }
            if result < 0, errno == EINTR { continue }
            // Reaped by someone else (ECHILD): ended, its status unknown.
            if result < 0 { waitStatus = 0x7f00; return waitStatus }
            return nil
        }
    }

    private static func exited(_ status: Int32) -> Bool { status & 0x7f == 0 }

    private static func descriptor(_ stream: Any?, childReads: Bool) -> Int32 {
        if let pipe = stream as? Pipe { return childReads ? pipe.fileHandleForReading.fileDescriptor : pipe.fileHandleForWriting.fileDescriptor }
        if let handle = stream as? FileHandle { return handle.fileDescriptor }
        return -1
    }

    private func withCStrings<T>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> T) -> T {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        return pointers.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
    }
}

/// A child the tests could not start.
package struct TestProcessError: Error, CustomStringConvertible {
    package var description: String
}
