import AgentCore
import AgentLoop
import AgentSupervision
import CAgentSystem
import Foundation
import Logging

extension Supervisor {
    /// Notices workers stopped by a signal (SIGSTOP, SIGTSTP…) and continued (SIGCONT): a
    /// pidfd reports only exits, so SIGCHLD comes through a signalfd into the loop, and each
    /// worker is asked with waitid (WSTOPPED | WCONTINUED, leaving exits to ``reap(_:)``).
    /// SIGCHLD must be blocked in every thread for the signalfd to see it: the caller blocks it
    /// before it starts threads (as `agent-control` does); it is blocked here for this thread.
    /// The `command` runs hear of it too (their daemons that die).
    func watchStops() {
        if let problem = signals.watchChildren({ [unowned self] in
            checkStops()
            work.childrenChanged()
        }) {
            logger.warning("cannot watch for stopped workers (\(problem)); status shows them running")
        }
    }

    /// Asks every worker whether it was stopped or continued since the last look.
    func checkStops() {
        for process in processes + table.retiring where process.hasWorker {
            var signal: Int32 = 0
            while true {
                let change = agent_wait_stop_change(process.pid, &signal)
                if change == 1 {
                    suspended(process, by: signal)
                } else if change == 2 {
                    resumed(process)
                } else {
                    break
                }
            }
        }
    }

    private func suspended(_ process: SupervisedProcess, by signal: Int32) {
        guard process.suspendedBy == nil else { return }
        process.suspendedBy = signal
        logger.warning("worker pid \(process.pid) was stopped by \(SignalName.of(signal)): it does nothing until it gets SIGCONT\(process.policy.watchdog == nil ? "" : " (or the watchdog kills it)")",
                       metadata: ["process": "\(process.name)"])
        record(process, "suspended", "stopped by \(SignalName.of(signal))")
    }

    private func resumed(_ process: SupervisedProcess) {
        guard let signal = process.suspendedBy else { return }
        process.suspendedBy = nil
        logger.notice("worker pid \(process.pid) continued (SIGCONT) after \(SignalName.of(signal)); \(process.state)", metadata: ["process": "\(process.name)"])
        record(process, "continued", "after \(SignalName.of(signal))")
    }
}
