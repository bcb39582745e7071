import AgentCore
import CAgentSystem
import Foundation
import Logging

/// The emails of task notifications on their way: a bounded queue emptied by one thread of
/// its own, so that neither the supervisor's loop nor the next run ever waits for a mail
/// server. When the queue is full the oldest email is dropped and counted; a failed attempt
/// is retried a few times (``NotificationSettings/Email/maxRetries``), then given up on,
/// logged and counted. Nothing here changes a run's result.
package final class NotificationDelivery: @unchecked Sendable {
    package struct Job: Sendable {
        package var notification: TaskNotification
        package var email: NotificationSettings.Email
    }

    private let capacity: Int
    private let logger: Logger
    // Everything below is guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var inFlight = 0
    private var stopDeadline: Double?
    private var finished = false
    private var counters = NotificationStatistics()

    package init(capacity: Int, logger: Logger) {
        self.capacity = max(1, capacity)
        self.logger = logger
        if let refused = SystemThread.run("notifications", { [self] in run() }) {
            logger.error("notifications: \(refused); no notification is sent until the agent starts again")
        }
    }

    /// Queues `job` without waiting; a full queue drops its oldest job (counted).
    package func enqueue(_ job: Job) {
        condition.lock()
        guard stopDeadline == nil else {
            counters.emailsDropped += 1
            condition.unlock()
            return
        }
        var dropped: (job: Job, total: UInt64)?
        if jobs.count >= capacity {
            counters.emailsDropped += 1
            dropped = (jobs.removeFirst(), counters.emailsDropped)
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
        // A flood is logged at its first drop and then every 100th, not once per email.
        if let (oldest, total) = dropped, total == 1 || total % 100 == 0 {
            logger.warning("notification email for task \(oldest.notification.task) run \(oldest.notification.runID) dropped: \(capacity) emails were already waiting (\(total) dropped so far; \"notifications\": {\"queue\": N} allows more)")
        }
    }

    /// Lets the queue drain for at most `timeout` seconds, then aborts what is in flight and
    /// drops (and counts) what is left. Returns whether everything was sent or given up on in
    /// time. Calling it again is harmless.
    @discardableResult
    package func stop(timeout: Double) -> Bool {
        condition.lock()
        if stopDeadline == nil { stopDeadline = Self.now() + max(0, timeout) }
        // libcurl asks the abort check about once a second while a server is silent.
        let grace = (stopDeadline ?? 0) + 1.5
        condition.broadcast()
        while !finished, Self.now() < grace { condition.wait(seconds: grace - Self.now()) }
        let done = finished && jobs.isEmpty
        condition.unlock()
        return done
    }

    package var statistics: NotificationStatistics {
        condition.lock()
        defer { condition.unlock() }
        var statistics = counters
        statistics.queued = jobs.count + inFlight
        return statistics
    }

    package static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    // MARK: The thread

    private func run() {
        agent_set_thread_name("notifications")
        var pipeSignal = SIGPIPE
        _ = agent_block_signals(&pipeSignal, 1)
        while let job = next() {
            deliver(job)
            condition.lock()
            inFlight = 0
            condition.unlock()
        }
        condition.lock()
        if !jobs.isEmpty {
            logger.warning("notifications stopped with \(jobs.count) emails not sent; they are dropped")
            counters.emailsDropped += UInt64(jobs.count)
            jobs.removeAll()
        }
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    private func next() -> Job? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let deadline = stopDeadline, jobs.isEmpty || Self.now() >= deadline { return nil }
            if jobs.isEmpty {
                condition.wait()
                continue
            }
            inFlight = 1
            return jobs.removeFirst()
        }
    }

    private var pastStopDeadline: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopDeadline.map { Self.now() >= $0 } ?? false
    }

    /// Sleeps `seconds`; false when the stop deadline cut it short.
    private func sleep(_ seconds: Double) -> Bool {
        let until = Self.now() + seconds
        condition.lock()
        defer { condition.unlock() }
        while true {
            let now = Self.now()
            let stop = stopDeadline ?? .infinity
            if now >= stop { return false }
            if now >= until { return true }
            condition.wait(seconds: min(until, stop) - now)
        }
    }

    private func deliver(_ job: Job) {
        let email = job.email
        let notification = job.notification
        let context = notification.templateContext
        let subject = email.subject.render(context)
        let body = email.body.render(context)
        let what = "notification email for task \(notification.task) run \(notification.runID) (attempt \(notification.attempt)) via \(email.url)"
        var delay = email.retryDelay
        for attempt in 0...email.maxRetries {
            let result = SMTPMailer.send(email, subject: subject, body: body, host: notification.host) { [self] in pastStopDeadline }
            switch result {
            case .sent:
                condition.lock()
                counters.emailsSent += 1
                condition.unlock()
                return
            case .interrupted:
                countDropped(what: what, why: "the agent stopped while it was being sent")
                return
            case .failed(let message):
                condition.lock()
                counters.failedAttempts += 1
                counters.lastError = message
                condition.unlock()
                guard attempt < email.maxRetries else {
                    condition.lock()
                    counters.emailsFailed += 1
                    condition.unlock()
                    logger.error("\(what) could not be delivered: \(message); gave up after \(attempt + 1) attempts (the run's result is unchanged)")
                    return
                }
                logger.warning("\(what): attempt \(attempt + 1) of \(email.maxRetries + 1) failed: \(message); retrying in \(delay.compactText) s")
                guard sleep(delay) else {
                    countDropped(what: what, why: "the agent stopped before its retry")
                    return
                }
                delay = min(delay * 2, 3600)
            }
        }
    }

    private func countDropped(what: String, why: String) {
        condition.lock()
        counters.emailsDropped += 1
        condition.unlock()
        logger.warning("\(what) dropped: \(why)")
    }

    /// Counts, from the notifier, what does not pass through the queue.
    package func count(_ change: (inout NotificationStatistics) -> Void) {
        condition.lock()
        change(&counters)
        condition.unlock()
    }
}
