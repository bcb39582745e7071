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

    /// Queues `job`; it runs after the ones queued before it.
    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        if !started {
            started = true
            let thread = Thread { [self] in run() }
            thread.name = "settings-checks"
            thread.start()
        }
        condition.signal()
        condition.unlock()
    }

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
