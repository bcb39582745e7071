import AgentLoop
import AgentSupervision
import Logging

/// The workers' deadlines: a start that does not report ready within its start timeout, or a
/// running worker whose heartbeats stop for its watchdog, is killed (and restarted as its
/// policy says). Checked by one timer, only while a worker is starting or has a watchdog.
@LoopActor
final class WorkerDeadlines {
    private let loop: EventLoop
    private let logger: Logger
    /// The supervised processes (the supervisor's table).
    private let processes: () -> [SupervisedProcess]
    /// Kills a worker's whole process group, saying why (``Supervisor/kill(_:reason:)``).
    private let kill: (SupervisedProcess, String) -> Void
    private var timer: Int?

    init(loop: EventLoop, logger: Logger, processes: @escaping () -> [SupervisedProcess], kill: @escaping (SupervisedProcess, String) -> Void) {
        self.loop = loop
        self.logger = logger
        self.processes = processes
        self.kill = kill
    }

    /// Kills workers that missed their start timeout or their watchdog. Runs while any
    /// process has a watchdog or is starting.
    func check() {
        let now = EventLoop.now()
        for process in processes() where process.hasWorker && process.killReason == nil {
            switch process.state {
            case .starting where now - process.spawnedAt > process.policy.startTimeout:
                logger.error("did not report ready within \(ProcessPolicy.format(process.policy.startTimeout)) s; killing it (a failed start)", metadata: ["process": "\(process.name)"])
                kill(process, "start timeout")
            // A paused process's heartbeats wait unread with its events; its watchdog restarts
            // when it is resumed.
            case .running where process.pauseCount == 0:
                if let watchdog = process.policy.watchdog, now - max(process.lastHeartbeat, process.readyAt) > watchdog {
                    logger.error("watchdog: no heartbeat for \(ProcessPolicy.format(watchdog)) s; killing it", metadata: ["process": "\(process.name)"])
                    kill(process, "watchdog: no heartbeat for \(ProcessPolicy.format(watchdog)) s")
                }
            default:
                break
            }
        }
    }

    /// How long a worker whose channel closed may take to exit before it is killed (seconds):
    /// an exit closes the channel first, and its reap follows within moments.
    static let closedChannelGrace = 2.0

    /// The worker's end of its channel closed (EOF). A worker that exits is reaped within
    /// moments; one that runs on (a module closed the descriptor, or every descriptor it did
    /// not know) can neither emit nor answer, and showed `running` for ever: killed, and
    /// restarted as its policy says.
    func channelClosed(_ process: SupervisedProcess) {
        let pid = process.pid
        loop.schedule(after: Self.closedChannelGrace) { [weak self, weak process] in
            guard let self, let process, process.hasWorker, process.pid == pid, process.killReason == nil,
                  process.state == .running || process.state == .starting,
                  // On its way out on a slow machine: its exit is reported as it was.
                  !ProcStat.isDying(pid) else { return }
            logger.error("the worker (pid \(pid)) closed its channel to the supervisor but runs on: it can neither emit nor answer; killing it (a module must not close descriptors it did not open)",
                         metadata: ["process": "\(process.name)"])
            kill(process, "closed its channel to the supervisor")
        }
    }

    /// Schedules the next deadline check, as rarely as the tightest deadline allows.
    func schedule() {
        guard timer == nil else { return }
        let watched = processes().filter { $0.hasWorker && ($0.state == .starting || $0.policy.watchdog != nil) }
        guard !watched.isEmpty else { return }
        let period = watched.map { min($0.policy.watchdog ?? .infinity, $0.policy.startTimeout) / 4 }.min() ?? 1
        timer = loop.schedule(after: max(0.01, min(1, period))) { [unowned self] in
            timer = nil
            check()
            schedule()
        }
    }
}
