import AgentLoop
import Foundation
import Logging

/// The agent as a systemd `Type=notify` service (see ``SystemdNotifier``): `READY=1` once every
/// enabled process's first start has settled, `RELOADING=1` … `READY=1` around a reload,
/// `STOPPING=1`, a `STATUS=` line after the turns of the loop that changed a process's state,
/// and `WATCHDOG=1` from the loop itself, so that a loop that no longer turns is restarted.
/// Does nothing without a notifier.
@LoopActor
package final class SystemdStatus {
    /// Nil when not run as a `Type=notify` service.
    package var notifier: SystemdNotifier?
    private var readySent = false
    private var reloading = false
    private var statusDirty = false
    /// Lines whose datagram the socket refused, sent again after the next turn.
    private var unsent: [String] = []
    /// The last failure logged: a socket that keeps failing is logged once.
    private var lastFailure: String?
    private let loop: EventLoop
    private let logger: Logger

    package init(loop: EventLoop, logger: Logger) {
        self.loop = loop
        self.logger = logger
    }

    /// Starts the watchdog pings (at half of `WATCHDOG_USEC`) and marks the status to be sent
    /// after the first turn.
    package func start() {
        guard let notifier else { return }
        logger.info("systemd: notifying \(notifier.socketName)\(notifier.watchdogInterval.map { "; watchdog ping every \(ProcessPolicy.format($0)) s" } ?? "")")
        statusDirty = true
        if let interval = notifier.watchdogInterval { scheduleWatchdogPing(every: interval) }
    }

    /// A timer of the loop, not a thread: when the loop is stuck, the pings stop.
    private func scheduleWatchdogPing(every interval: Double) {
        loop.schedule(after: interval) { [weak self] in
            guard let self, let notifier else { return }
            notify(notifier, ["WATCHDOG=1"])
            scheduleWatchdogPing(every: interval)
        }
    }

    /// A process changed its state: the status goes after this turn.
    package func stateChanged() {
        statusDirty = true
    }

    /// After a turn of the loop: the status if a state changed (one datagram however many
    /// changed), with `READY=1` the first time `settled` holds. A datagram the socket refused
    /// (it never blocks: a reader that is behind, with its queue full of watchdog pings, makes
    /// it fail) goes again after the next turn, with what a reload's end could not send: lost,
    /// `READY=1` would leave systemd waiting for the start, and the status would stay stale
    /// until the next change.
    package func afterTurn(settled: @autoclosure () -> Bool, status: @autoclosure () -> String) {
        guard statusDirty || !unsent.isEmpty, let notifier else { return }
        let ready = !readySent && settled()
        guard notify(notifier, status: status(), unsent + (ready ? ["READY=1"] : [])) else {
            statusDirty = true
            return
        }
        statusDirty = false
        unsent = []
        if ready { readySent = true }
    }

    /// Around a reload (SIGHUP, `systemctl reload`, the reload command): `RELOADING=1` with the
    /// monotonic time systemd asks for. Only once ready: before that, systemd still waits for
    /// the first `READY=1`.
    package func reloadBegan(stopping: Bool) {
        guard let notifier, readySent, !stopping else { return }
        reloading = true
        notify(notifier, status: "reloading the settings", ["RELOADING=1", "MONOTONIC_USEC=\(SystemdNotifier.monotonicMicroseconds())"])
    }

    /// The end of a reload, applied or refused: `READY=1` again.
    package func reloadEnded(applied: Bool, status: @autoclosure () -> String) {
        guard let notifier, reloading else { return }
        reloading = false
        let status = applied ? status() : "reload refused, the running configuration stays; \(status())"
        if !notify(notifier, status: status, ["READY=1"]) { unsent.append("READY=1") }
    }

    /// `STOPPING=1` when the agent begins to stop.
    package func stopping(status: @autoclosure () -> String) {
        guard let notifier else { return }
        notify(notifier, status: status(), ["STOPPING=1"])
    }

    /// What `systemctl status` shows: `3/4 processes running; backoff: feed`.
    package static func serviceStatus(of processes: [SupervisedProcess], retiring: [SupervisedProcess], stopping: Bool) -> String {
        let configured = processes.filter { !$0.isTaskExecutor }
        if stopping {
            let left = (processes + retiring).filter(\.hasWorker).count
            return "stopping: \(left) worker(s) left"
        }
        var text = "\(configured.filter { $0.state == .running }.count)/\(configured.count) processes running"
        var others: [String: [String]] = [:]
        for process in configured where process.state != .running {
            others[process.state.shortName, default: []].append(process.name)
        }
        for (state, names) in others.sorted(by: { $0.key < $1.key }) {
            text += "; \(state): " + names.prefix(5).joined(separator: ", ") + (names.count > 5 ? " and \(names.count - 5) more" : "")
        }
        let executors = processes.filter { $0.isTaskExecutor && $0.hasWorker }.count
        if executors > 0 { text += "; \(executors) task executor(s)" }
        return text
    }

    @discardableResult
    private func notify(_ notifier: SystemdNotifier, status: String? = nil, _ lines: [String]) -> Bool {
        let sent = status == nil ? notifier.send(lines) : notifier.send(status: status, lines)
        if !sent, let failure = notifier.lastFailure, failure != lastFailure {
            logger.warning("\(failure)")
        }
        lastFailure = notifier.lastFailure
        return sent
    }
}
