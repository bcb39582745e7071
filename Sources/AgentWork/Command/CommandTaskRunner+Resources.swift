import AgentLoop
import Foundation

/// A command that cannot start for want of descriptors or processes (EMFILE, ENFILE, EAGAIN,
/// ENOMEM: a low `ulimit -n` or `-u`, a full process table) waits and is tried again, in 1, 2,
/// 4 … at most 10 s, as a worker is: every run of a queue failed at once ("no pipes for it (Too
/// many open files)"), for a shortage that passes.
extension CommandTaskRunner {
    /// Whether `code` says the system lacked something for a while, not that the command is wrong.
    static func lacks(_ code: Int32) -> Bool { [EMFILE, ENFILE, EAGAIN, ENOMEM].contains(code) }

    /// The longest wait between two tries.
    static let longestLaunchWait = 10.0

    /// `run` waits for its next try; its first wait is said.
    func launchLater(_ run: CommandRun, _ failure: String) {
        run.launchTries += 1
        let wait = min(pow(2, Double(run.launchTries - 1)), Self.longestLaunchWait)
        // Said at the first wait, and again every 5 minutes or so of a shortage that lasts.
        if run.launchTries % 30 == 1 {
            logger.warning("task \(run.start.task.name): \(failure); the run waits and its command is tried again (every \(Int(Self.longestLaunchWait)) s at most) until it starts (try \(run.launchTries))",
                           metadata: ["run": "\(run.runID)"])
        }
        // A large input read for the launch is held as its text alone again meanwhile.
        run.start.held.compact()
        let timer = loop.schedule(after: wait) { [weak self] in
            guard let self, launchWaiting.removeValue(forKey: run.runID) != nil else { return }
            if stopped { return finishUnstarted(run, "the agent stopped before the command could start", status: .interrupted) }
            if run.start.held.isTextOnly { readInputAside(run) } else { begin(run) }
        }
        launchWaiting[run.runID] = (run, timer)
    }

    /// Ends a run waiting for its launch (a cancel or a timeout); false when none waits.
    func cancelWaiting(_ runID: String, reason: TaskRunOutcome.Status) -> Bool {
        guard let waiting = launchWaiting.removeValue(forKey: runID) else { return false }
        loop.cancel(waiting.timer)
        finishUnstarted(waiting.run, "\(Self.endedUnstarted(reason)) before its command could start (the agent lacked descriptors or processes for it)", status: reason)
        return true
    }

    /// How a run ended before its command started, in a word: `timed out`, `interrupted`, `cancelled`.
    static func endedUnstarted(_ reason: TaskRunOutcome.Status) -> String {
        reason == .timedOut ? "timed out" : reason == .interrupted ? "interrupted" : "cancelled"
    }

    /// At the stop: the runs waiting for their launch end interrupted (the next start runs them).
    func endWaiting() {
        for runID in Array(launchWaiting.keys) { _ = cancelWaiting(runID, reason: .interrupted) }
    }
}
