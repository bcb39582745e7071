import AgentTestSupport
import Foundation
import Testing

/// The tests' own child processes (``TestProcess``, in place of Foundation's `Process`): reaped
/// the moment they end (a zombie stalls swift-testing's exit tests), their status as
/// Foundation's, a process group of their own, the null device as /dev/null.
@Suite(.ownThreads) struct TestProcessTests {
    static func start(_ script: String, output: Any? = nil) throws -> TestProcess {
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.standardOutput = output
        try process.run()
        return process
    }

    /// Whether `pid` is gone from the process table (reaped: not even a zombie).
    static func isReaped(_ pid: pid_t) -> Bool { kill(pid, 0) != 0 && errno == ESRCH }

    @Test func aChildThatEndsIsReapedWithoutAnyoneAsking() throws {
        let process = try Self.start("exit 3")
        let pid = process.processIdentifier
        #expect(pid > 0)
        // Nothing here asks isRunning or waits: the child must leave the table by itself.
        #expect(OutputTestSupport.waitUntil(timeout: 60) { Self.isReaped(pid) }, "pid \(pid) is still in the process table")
        #expect(!process.isRunning)
        #expect(process.terminationStatus == 3)
        #expect(process.terminationReason == .exit)
    }

    @Test func aKilledChildSaysItsSignal() throws {
        let process = try Self.start("exec sleep 60")
        #expect(process.isRunning)
        kill(process.processIdentifier, SIGKILL)
        #expect(OutputTestSupport.waitUntil(timeout: 60) { !process.isRunning })
        #expect(process.terminationStatus == SIGKILL)
        #expect(process.terminationReason == .uncaughtSignal)
    }

    @Test func aChildLeadsAProcessGroupOfItsOwn() throws {
        let process = try Self.start("exec sleep 60")
        defer { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        #expect(getpgid(process.processIdentifier) == process.processIdentifier)
        #expect(getpgid(process.processIdentifier) != getpgrp())
    }

    @Test func theNullDeviceIsDevNullForTheChild() throws {
        let folder = TestPaths.temporaryDirectory("test-process")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The shell's own stdout, read before any redirection of its own.
        let process = try Self.start("target=$(readlink /proc/$$/fd/1); echo \"$target\" > \(folder)/stdout", output: FileHandle.nullDevice)
        #expect(ProcessDeadline.waitForExit(process, within: 60, "readlink") == 0)
        let target = try String(contentsOfFile: folder + "/stdout", encoding: .utf8)
        #expect(target.trimmingCharacters(in: .whitespacesAndNewlines) == "/dev/null")
    }
}
