import AgentLoop
import AgentSupervision
import Foundation
import JSONSchema

/// One attempt of a `command` task while its program runs: the process, the runner's ends of
/// its pipes, and what it wrote so far.
@LoopActor
package final class CommandRun {
    package var start: TaskRunStart
    package let report: (TaskRunReport) -> Void
    package let startedAt = EventLoop.now()
    /// The program, for messages (resolved from PATH when it named no folder).
    package var program = ""
    /// Tries of its launch that failed for want of descriptors or processes.
    package var launchTries = 0
    /// The child, which leads a process group of its own (its id is the group's): 0 once reaped.
    package var pid: pid_t = 0
    /// Readable when the child exits; -1 without pidfds (then a timer polls).
    package var pidFD: Int32 = -1
    package var pollTimer: Int?
    package var stdinFD: Int32 = -1
    package var stdoutFD: Int32 = -1
    package var stderrFD: Int32 = -1
    /// The input not yet written to stdin (it did not fit in the pipe at the start).
    package var pendingInput: [UInt8] = []
    package var inputOffset = 0
    package var stdout: CommandStdout
    package var stderr: CommandOutputTail
    /// The end of stdout, bounded as stderr's (the attempt's record; ``stdout`` keeps the start).
    package var stdoutTail: CommandOutputTail
    /// Why the run is being ended early (cancel, timeout, the agent's stop), if it is.
    package var endReason: TaskRunOutcome.Status?
    /// SIGKILL after the grace of a cancel.
    package var killTimer: Int?
    /// The attempt's own cgroup (nil without cgroups: its process group stands for it).
    package var cgroup: RunCgroup?
    /// The program has ended: how, reported once its cgroup is empty.
    package var ending: TaskRunOutcome?
    /// The program has ended with this wait status while its outcome's texts are made off the
    /// loop (``CommandCaptures/isLarge``): ``ending`` is set when they are back.
    package var exitStatus: Int32?
    /// When the program ended, and the timer that looks again whether its cgroup is empty.
    package var endedAt = 0.0
    package var settleTimer: Int?
    /// Said once that its cgroup is slow to empty.
    package var slowToSettle = false
    /// The members of its cgroup when a cancel, a timeout or the stop killed it: reaped by pid
    /// with what is left when its program is (see ``CommandTaskRunner``).
    package var killedMembers: [pid_t] = []

    package init(start: TaskRunStart, limits: CommandTaskRunner.Limits, report: @escaping (TaskRunReport) -> Void) {
        self.start = start
        self.report = report
        stdout = CommandStdout(limit: limits.stdoutBytes)
        stderr = CommandOutputTail(byteLimit: limits.stderrBytes, lineLimit: limits.stderrLines)
        stdoutTail = CommandOutputTail(byteLimit: limits.stderrBytes, lineLimit: limits.stderrLines)
    }

    package var runID: String { start.runID }

    /// The runner's open descriptors of this run.
    package var fds: [Int32] { [pidFD, stdinFD, stdoutFD, stderrFD].filter { $0 >= 0 } }

    /// What its pipes gave so far.
    package var captures: CommandCaptures { CommandCaptures(stdout: stdout, stderr: stderr, stdoutTail: stdoutTail) }

    /// How the attempt ended, from the child's wait status (and why it was ended, if it was)
    /// and the texts made of its pipes.
    package func outcome(status: Int32, texts: CommandCaptures.Texts) -> TaskRunOutcome {
        var outcome = TaskRunOutcome(status: .succeeded, output: texts.output, stderrTail: texts.stderrTail)
        outcome.stdoutTail = texts.stdoutTail
        // ``CommandStdout/output()`` keeps JSON nested deeper as its text.
        outcome.outputNestingChecked = true
        let lastLine = texts.stderrLastLine.map { "; last line of stderr: \($0)" } ?? ""
        if let code = ProcessSpawner.exitCode(status) {
            outcome.exitCode = code
            if code != 0 {
                outcome.status = .failed
                outcome.error = "exited with status \(code)" + lastLine
            }
        } else {
            let signal = ProcessSpawner.termSignal(status)
            outcome.signal = SignalName.of(signal)
            outcome.status = .failed
            outcome.error = "killed by \(SignalName.of(signal))" + lastLine
        }
        switch endReason {
        case .timedOut?:
            outcome.status = .timedOut
            let limit = start.task.timeout.map { " of \(ProcessPolicy.format($0)) s" } ?? ""
            outcome.error = "timed out: killed (with everything it started) after its timeout\(limit)"
        case .cancelled?:
            outcome.status = .cancelled
            outcome.error = "cancelled: ended (with everything it started) at a user's request"
        case .interrupted?:
            outcome.status = .interrupted
            outcome.error = "interrupted: the agent stopped while it ran; it was ended with everything it started"
        default:
            break
        }
        return outcome
    }
}
