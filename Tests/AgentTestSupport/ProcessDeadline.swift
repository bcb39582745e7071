import Foundation
import Testing

/// Deadlines for a test's own child processes: a test that waits for a child (its exit, or its
/// output to the end) ends within a bound, saying what the child was doing, rather than holding
/// the run until the watchdog (15 minutes, with only the test's name said).
package enum ProcessDeadline {
    /// Kills `process` (SIGKILL) if it is still running `seconds` from now, printing why with its
    /// threads' state (to stderr: the timer is no test's thread, where an issue would be
    /// attributed to no test): a read of its output to the end then ends too, and the test's
    /// own checks of the output and the status fail. Call ``Guard/cancel()`` once it has ended.
    package static func kill(_ process: TestProcess, after seconds: Double, _ what: String) -> Guard {
        let guarded = Guard()
        let pid = process.processIdentifier
        Thread {
            let deadline = Date().addingTimeInterval(seconds)
            while !guarded.isCancelled, Date() < deadline { usleep(20_000) }
            guard !guarded.isCancelled, AgentRun.isAlive(pid) else { return }
            let report = "ProcessDeadline: \(what): still running after \(Int(seconds)) s, killed.\n\(AgentRun.stuckReport(pid, "still running"))\n"
            FileHandle.standardError.write(Data(report.utf8))
            Foundation.kill(pid, SIGKILL)
        }.start()
        return guarded
    }

    /// Waits for `process` to end, at most `seconds`; past them records an issue with its
    /// threads' state and kills it. Its exit status, or nil when it had to be killed. A
    /// zombie's exit code (the kernel's word) is taken as soon as it is there.
    @discardableResult
    package static func waitForExit(_ process: TestProcess, within seconds: Double, _ what: String) -> Int32? {
        let pid = process.processIdentifier
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline {
            if let status = AgentRun.exitStatusOfZombie(pid) { return status }
            usleep(10_000)
        }
        if !process.isRunning { return process.terminationStatus }
        Issue.record("\(what): still running after \(Int(seconds)) s, killed.\n\(AgentRun.stuckReport(pid, "still running"))")
        Foundation.kill(pid, SIGKILL)
        return nil
    }

    /// Ends a ``kill(_:after:_:)`` timer.
    package final class Guard: @unchecked Sendable {
        private let lock = NSLock()
        private var cancelled = false
        var isCancelled: Bool { lock.withLock { cancelled } }
        package func cancel() { lock.withLock { cancelled = true } }
    }
}
