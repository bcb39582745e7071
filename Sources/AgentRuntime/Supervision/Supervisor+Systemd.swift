import AgentSupervision
import Foundation

/// The agent as a systemd `Type=notify` service (see ``SystemdNotifier``): `READY=1` once every
/// enabled process's first start has settled, `RELOADING=1` … `READY=1` around a reload,
/// `STOPPING=1`, a `STATUS=` line after the turns of the loop that changed a process's state,
/// and `WATCHDOG=1` from the loop itself, so that a loop that no longer turns is restarted.
extension Supervisor {
    /// Starts the watchdog pings (at half of `WATCHDOG_USEC`) and marks the status to be sent
    /// after the first turn. Called by ``run()``.
    func startSystemdNotifications() {
        guard let systemd else { return }
        logger.info("systemd: notifying \(systemd.socketName)\(systemd.watchdogInterval.map { "; watchdog ping every \(ProcessPolicy.format($0)) s" } ?? "")")
        systemdStatusDirty = true
        if let interval = systemd.watchdogInterval { scheduleWatchdogPing(every: interval) }
    }

    /// A timer of the loop, not a thread: when the loop is stuck, the pings stop.
    private func scheduleWatchdogPing(every interval: Double) {
        loop.schedule(after: interval) { [weak self] in
            guard let self, let systemd else { return }
            notify(systemd, ["WATCHDOG=1"])
            scheduleWatchdogPing(every: interval)
        }
    }

    /// After a turn of the loop: the status if a state changed (one datagram however many
    /// changed), with `READY=1` the first time every process has settled.
    func notifySystemdAfterTurn() {
        guard systemdStatusDirty, let systemd else { return }
        systemdStatusDirty = false
        var extra: [String] = []
        if !systemdReadySent, !stopping, firstStartsSettled {
            systemdReadySent = true
            extra.append("READY=1")
        }
        notify(systemd, status: serviceStatus, extra)
    }

    /// Whether every enabled process has been started and is past `starting`: running, or
    /// failed, exited or waiting in backoff. A process that cannot start must not hold the whole
    /// agent back (systemd would kill it at TimeoutStartSec); `STATUS=` names it.
    var firstStartsSettled: Bool {
        // Every process waits in `pendingStarts` until it is spawned (then `starting`).
        pendingStarts.isEmpty && !processes.contains { !$0.isTaskExecutor && $0.state == .starting }
    }

    /// Around a reload (SIGHUP, `systemctl reload`, the reload command): `RELOADING=1` with the
    /// monotonic time systemd asks for. Only once ready: before that, systemd still waits for
    /// the first `READY=1`.
    func notifySystemdReloading() {
        guard let systemd, systemdReadySent, !stopping else { return }
        systemdReloading = true
        notify(systemd, status: "reloading the settings", ["RELOADING=1", "MONOTONIC_USEC=\(SystemdNotifier.monotonicMicroseconds())"])
    }

    /// The end of a reload, applied or refused: `READY=1` again.
    func notifySystemdReloaded(applied: Bool) {
        guard let systemd, systemdReloading else { return }
        systemdReloading = false
        let status = applied ? serviceStatus : "reload refused, the running configuration stays; \(serviceStatus)"
        notify(systemd, status: status, ["READY=1"])
    }

    /// `STOPPING=1` when the agent begins to stop.
    func notifySystemdStopping() {
        guard let systemd else { return }
        notify(systemd, status: serviceStatus, ["STOPPING=1"])
    }

    /// What `systemctl status` shows: `3/4 processes running; backoff: feed`.
    var serviceStatus: String {
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

    private func notify(_ systemd: SystemdNotifier, status: String? = nil, _ lines: [String]) {
        let sent = status == nil ? systemd.send(lines) : systemd.send(status: status, lines)
        if !sent, let failure = systemd.lastFailure, failure != systemdLastFailure {
            logger.warning("\(failure)")
        }
        systemdLastFailure = systemd.lastFailure
    }
}
