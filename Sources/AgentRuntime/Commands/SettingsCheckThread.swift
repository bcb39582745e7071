import AgentCore
import Foundation

/// Runs the settings commands' checks off the supervisor's loop, one at a time, in order, on
/// one long-lived thread: describing a module may take its describe worker up to 30 s, and no
/// client may hold routing that long. Long-lived because a describe worker's parent-death
/// signal follows the thread that spawned it; started by the loop's thread, whose signal mask
/// (SIGCHLD blocked) it inherits.
final class SettingsCheckThread: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var started = false

    /// Queues `job`; it runs after the ones queued before it. The refusal, `job` not queued,
    /// when the thread is not started yet and the system refuses it (`ulimit -u`, TasksMax):
    /// the caller answers with it (a job queued for a thread that never came waited for good).
    func submit(_ job: @escaping @Sendable () -> Void) -> SystemThread.Refusal? {
        condition.lock()
        defer { condition.unlock() }
        if !started {
            if let refused = SystemThread.run(Self.threadName, { [self] in run() }) { return refused }
            started = true
        }
        jobs.append(job)
        condition.signal()
        return nil
    }

    static let threadName = "settings-checks"

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}
