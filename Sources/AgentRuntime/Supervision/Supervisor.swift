import AgentBase
import AgentCommands
import AgentCore
import AgentLoop
import AgentOutputs
import AgentStore
import AgentSupervision
import AgentVersion
import AgentWork
import CAgentSystem
import Foundation
import JSONSchema
import Logging

/// Runs every enabled process of an agent as its own worker process, routes events between
/// them, restarts the ones that die, and stops them all on SIGINT/SIGTERM.
///
/// Everything happens on the thread that calls ``run()`` (spawn included, so that workers'
/// parent-death signal follows a thread that lives as long as the supervisor): it is built by
/// ``make(configuration:processes:console:logger:)`` on that thread, and isolated to the loop's
/// actor; code on that thread outside the loop's turns enters with `inbox.isolated {}`.
@LoopActor
public final class Supervisor {
    public nonisolated let configuration: SupervisorConfiguration
    let console: ConsoleOutput
    package nonisolated let logger: Logger
    package let loop: EventLoop
    /// The loop's inbox: work from other threads, and the way in for the thread that owns the
    /// loop (``LoopInbox/isolated(_:)``).
    package nonisolated let inbox: LoopInbox
    /// Each process's recent output and the log lines about it (`agent-control logs`).
    public nonisolated let processLog = ProcessLog()

    /// The processes, configured, retiring, waiting to start and disabled (see ``ProcessTable``).
    let table = ProcessTable()
    /// The reload check and the settings commands (see ``SettingsHost``).
    public let settingsHost = SettingsHost()
    /// The control socket, the command layer and the other fronts (see ``ControlFronts``).
    public let fronts = ControlFronts()
    /// The work layer: tasks, schedules, workflows, their notifications and triggers (see
    /// ``WorkHost``; set up by ``setUpWork(_:agentDirectory:notifications:)``).
    package private(set) lazy var work = WorkHost(host: self, events: self, environment: configuration.environment)
    /// The fleet: membership, the schedules' leadership, events across hosts (see ``FleetBridge``).
    package private(set) lazy var fleetBridge = FleetBridge(work: work, events: self, startedAt: startedAt, version: AgentVersion.current)
    /// Shared memory for the commands and the workers (see ``MemoryService``).
    package private(set) lazy var memory = MemoryService(loop: loop, logger: logger) { [unowned self] process, body in
        send(.memoryResult, body: body, to: process)
    }
    /// Chat requests to the chatbot, their tool calls and the chat history (see ``ChatRelay``).
    private(set) lazy var chat = ChatRelay(loop: loop, logger: logger, events: self)
    /// The store's reads: periodic queries, the workers' queries (see ``QueryHost``).
    private(set) lazy var queries = QueryHost(loop: loop, logger: logger, events: self)
    /// Warm spare workers of modules whose processes crashed (see ``SparePool``).
    let spares: SparePool
    /// The fork server, restarted when it dies (see ``useForkServer(_:)``).
    lazy var forkServers: ForkServerKeeper = ForkServerKeeper(
        loop: loop, logger: logger,
        start: { [unowned self] in
            let started = ForkServer.start(workerPath: configuration.workerPath, environment: configuration.environment, cgroup: containment?.workersCgroupFD ?? -1)
            if case .success(let server) = started { containment?.forkServerStarted(server.pid) }
            return started
        },
        isStopping: { [unowned self] in stopping },
        serverDied: { [unowned self] in orphans.scheduleSweep() })
    /// Where the workers' process groups are written down (without a cgroup), nil: nowhere.
    public var containment: WorkerContainment?
    /// Configured outputs (nil: none; handed over by ``attach(store:fleet:outputs:)``).
    public internal(set) var outputs: OutputHub?
    /// The embedded store (nil: running without it; handed over by ``attach(store:fleet:outputs:)``).
    public internal(set) var store: AgentStore?
    /// Who besides the subscribers sees the events (see ``EventTaps``).
    private(set) var taps = EventTaps()
    let startedAt = EventLoop.now()
    /// Subscriptions, each source's targets, and the processes with frames to write (see
    /// ``EventRouter``).
    let router = EventRouter()
    /// Writes the workers' queued frames (see ``DeliveryWriter``).
    let writer: DeliveryWriter

    var stopping = false
    /// Notifies systemd of readiness, reloads, stops, the status and the loop's liveness (see
    /// ``SystemdStatus``; its notifier is nil when not run as a `Type=notify` service).
    let systemd: SystemdStatus
    /// Kills workers that miss their start timeout or their watchdog (see ``WorkerDeadlines``).
    private(set) lazy var deadlines = WorkerDeadlines(loop: loop, logger: logger, processes: { [unowned self] in processes },
                                                      kill: { [unowned self] process, reason in kill(process, reason: reason) })
    /// Kills what dead workers left behind (``run()`` makes this process a child subreaper).
    lazy var orphans = OrphanSweeper(
        loop: loop, logger: logger,
        living: { [unowned self] in
            var pids = Set((processes + table.retiring).map(\.pid) + spares.pids)
            if let server = forkServers.server { pids.insert(server.pid) }
            return pids
        },
        isTaskProcess: { [unowned self] in work.isTaskCommandProcess($0) },
        isStarting: { [unowned self] in
            // A restart in flight; one stuck in its start (past a tenth of a second) holds no sweep.
            let now = EventLoop.now()
            return processes.contains { $0.state == .starting && now - $0.spawnedAt < 0.1 }
        })
    /// The signal pipe (one the launcher installed is taken over) and SIGCHLD's signalfd.
    let signals: SignalWatch
    /// The workers' stdout and stderr, line by line to the log.
    private(set) lazy var outputReader = WorkerOutputReader(loop: loop, processLog: processLog, logger: logger)
    /// Read into on the loop; `nonisolated(unsafe)` only so that the (nonisolated) deinit frees it.
    nonisolated(unsafe) let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)

    /// Supervises the planned processes (see ``SettingsValidator``), on a new loop that this
    /// thread drives from now on.
    public nonisolated static func make(configuration: SupervisorConfiguration, processes planned: [PlannedProcess], console: sending ConsoleOutput,
                                        logger: Logger) -> Supervisor {
        let loop = EventLoop()
        let inbox = loop.inbox
        return inbox.isolated { Supervisor(loop: loop, configuration: configuration, processes: planned, console: console, logger: logger) }
    }

    private init(loop: EventLoop, configuration: SupervisorConfiguration, processes planned: [PlannedProcess], console: ConsoleOutput, logger: Logger) {
        self.loop = loop
        inbox = loop.inbox
        self.configuration = configuration
        self.console = console
        self.logger = ProcessLogHandler.teeing(logger, into: processLog)
        spares = SparePool(loop: loop)
        writer = DeliveryWriter(loop: loop, router: router, logger: self.logger)
        systemd = SystemdStatus(loop: loop, logger: self.logger)
        signals = SignalWatch(loop: loop, logger: self.logger)
        setProcesses(planned.map(SupervisedProcess.init))
        updateEventTaps()
        wireParts()
    }

    func updateEventTaps() {
        taps = EventTaps(console: console, outputs: outputs, store: store)
    }

    /// Gives every process the state it saved in an earlier run.
    func loadSavedStates() {
        guard let store else { return }
        let states = store.loadStates()
        for process in processes where process.savedState == nil { process.savedState = states[process.name] }
    }

    func setProcesses(_ list: [SupervisedProcess]) {
        table.set(list)
        // A process removed by a reload loses its log; a kept or changed one keeps it.
        processLog.keep(table.byName.keys)
        rebuildRouting()
    }

    /// The configured processes (the table's list, read everywhere).
    var processes: [SupervisedProcess] { table.processes }
    /// Processes the settings list with `"enabled": false` (shown by `status` as `disabled`).
    public var disabledProcesses: [DisabledProcess] {
        get { table.disabled }
        set { table.disabled = newValue }
    }

    deinit { readBuffer.deallocate() }

    func rebuildRouting() {
        router.rebuild(processes)
    }

    /// On the thread that built the supervisor (it enters the loop for the read): for tests and
    /// tools that embed it.
    public nonisolated func process(named name: String) -> SupervisedProcessInfo? {
        inbox.isolated { table.byName[name].map(SupervisedProcessInfo.init) }
    }

    /// A snapshot of every process (on the thread that built the supervisor).
    public nonisolated var snapshot: [SupervisedProcessInfo] { inbox.isolated { processes.map(SupervisedProcessInfo.init) } }

    // MARK: Running

    /// Starts every process and runs until SIGINT or SIGTERM; then stops them all (gracefully,
    /// then SIGKILL after the stop timeout) and returns. On the thread that built it.
    /// `afterFirstSpawn`: set-up that need not hold the first worker back (the launcher's: the
    /// work's); it runs once that worker has been asked for, before the loop's first turn, so
    /// that nothing the loop handles (a command, an event, a worker's frame) finds the agent
    /// without it.
    public nonisolated func run(afterFirstSpawn: (@LoopActor () -> Void)? = nil) {
        // For the whole run this thread is the loop's, and the loop is the process's home
        // loop: `LoopActor` work enqueued from other threads (the HTTP front) runs here.
        inbox.isolated { runToTheEnd(afterFirstSpawn: afterFirstSpawn) }
    }

    private func runToTheEnd(afterFirstSpawn: (@LoopActor () -> Void)?) {
        loop.becomeHome()
        defer { loop.resignHome() }
        installSignals()
        watchStops()
        orphans.becomeSubreaper()
        LaunchedWorker.raiseFileLimit()
        fronts.openControlSocket(loop: loop, limits: ControlLimits(environment: configuration.environment), logger: logger) { [unowned self] request, caller, respond in
            execute(request, caller: caller, respond: respond)
        }
        defer { fronts.close() }
        if processes.isEmpty { logger.warning("no enabled process in the settings; waiting for a signal to stop") }
        if !configuration.sharedRings { logger.notice("AGENT_SHARED_RINGS=0: events go to and from workers on their sockets") }
        systemd.start()
        watchConsolePipe()
        startInTurns(processes)
        if let setUp = afterFirstSpawn {
            // The first worker's start frame leaves now, not after the set-up: it starts meanwhile.
            flushDirty()
            setUp()
        }
        queries.start(processes)
        fleetBridge.start()
        // Running task runs get their grace to end (and are recorded) before the agent goes.
        while !(stopping && processes.allSatisfy { !$0.hasWorker } && table.retiring.isEmpty && orphans.isEmpty && !work.hasRunsGoing) {
            afterLoopTurn()
            loop.runOnce()
        }
        // What the last workers left behind.
        orphans.sweep()
        run(until: { orphans.isEmpty }, timeout: 2)
        forkServers.drop()
        signals.unwatchChildren()
        console.flush()
        // Before the outputs: its last records go to them.
        work.stopNotifications(timeout: 5)
        outputs?.stop(timeout: 5)
        queries.stop()
        fleetBridge.close()
        store?.close()
        logger.info("all workers stopped")
    }

    /// Runs the loop until `condition` holds or `timeout` passes (for tests and tools that
    /// embed the supervisor). On the thread that built it; `condition` runs on the loop, after
    /// each turn's writes: what a turn routed is on its way before the caller looks (agent-bench
    /// reads its messages and the processes' states there, now and then: before, that delayed
    /// the events of the turn it ran in, 2 % of them at 10,000 events/s).
    public nonisolated func run(until condition: () -> Bool, timeout: Double) {
        let outer = LoopExecutor.enter(inbox)
        defer { LoopExecutor.restore(outer) }
        let deadline = EventLoop.now() + timeout
        LoopActor.assumeIsolated { afterLoopTurn() }
        while !condition(), EventLoop.now() < deadline {
            LoopActor.assumeIsolated { turn(maxWait: min(0.05, deadline - EventLoop.now())) }
        }
    }

    private func turn(maxWait: Double) {
        loop.runOnce(maxWait: maxWait)
        afterLoopTurn()
    }

    func afterLoopTurn() {
        flushDirty()
        console.flush()
        if console.readerGone, !stopping {
            logger.notice("the console's output was closed (\(console.endedHow)); stopping all processes")
            stopAll()
        }
        systemd.afterTurn(settled: !stopping && firstStartsSettled, status: serviceStatus)
    }

    /// A pipe on stdout whose reader exits (`console --json | head -8`), or a terminal that is
    /// closed, reports a hang-up at once: the agent stops then, rather than at its next line's
    /// failed write (or never: a closed terminal's SIGHUP is a reload).
    private func watchConsolePipe() {
        guard let fd = console.pipeDescriptor else { return }
        loop.register(fd, events: 0) { [unowned self] events in
            guard events & EventLoop.hangup != 0 else { return }
            loop.unregister(fd)
            console.pipeClosed()
        }
    }

    /// Forks workers with `server` (when not nil) from now on: the supervisor keeps one (it
    /// restarts a server that dies) and shuts it down at the end of ``run()``. Start it from
    /// the thread that runs the supervisor.
    public func useForkServer(_ server: ForkServer?) {
        guard let server else { return }
        containment?.forkServerStarted(server.pid)
        forkServers.adopt(server)
    }

    /// The fork server in use, nil: workers are spawned with posix_spawn.
    public var forkServer: ForkServer? { forkServers.server }

    /// What `systemctl status` shows: `3/4 processes running; backoff: feed`.
    var serviceStatus: String { SystemdStatus.serviceStatus(of: processes, retiring: table.retiring, stopping: stopping) }

    /// SIGUSR1: the log file was moved away (logrotate); a new one is opened at its path.
    private func reopenLogFile() {
        guard let logFile = console.logFile else {
            logger.notice("SIGUSR1 received; there is no log file to reopen (the log goes to stderr)")
            return
        }
        if let problem = logFile.reopen() {
            logger.error("SIGUSR1 received; \(problem); the log goes on in the file that was open")
        } else {
            logger.notice("SIGUSR1 received; reopened the log file \(logFile.path)")
        }
    }

    private func installSignals() {
        signal(SIGPIPE, SIG_IGN)
        // Moved away while the modules were prepared (a SIGUSR1 then was not handled yet).
        if let logFile = console.logFile, logFile.reopenIfMoved() { logger.notice("reopened the log file \(logFile.path): it had been moved") }
        let problem = signals.watch([SIGINT, SIGTERM, SIGHUP, SIGUSR1]) { [unowned self] signal in
            if signal == SIGHUP, console.terminalClosed {
                // The console's terminal was closed (its window, an ssh session): not a reload.
                console.pipeClosed()
            } else if signal == SIGHUP {
                logger.notice("SIGHUP received")
                reload { _ in }
            } else if signal == SIGUSR1 {
                reopenLogFile()
            } else if !stopping {
                logger.notice("\(SignalName.of(signal)) received; stopping all processes")
                stopAll()
            } else {
                logger.notice("\(SignalName.of(signal)) received again; still waiting for workers to stop")
                // The operator will not wait for the tasks' grace: what still runs is killed now.
                work.endStop()
            }
        }
        if let problem { logger.error("cannot install signal handlers: \(problem)") }
    }

    /// Asks every worker to stop; SIGKILL follows after the stop timeout.
    public func stopAll() {
        let wasStopping = stopping
        stopping = true
        if !wasStopping { systemd.stopping(status: serviceStatus) }
        work.shutDown()
        fleetBridge.stop()
        spares.dropAll()
        for process in processes {
            if let timer = process.restartTimer {
                loop.cancel(timer)
                process.restartTimer = nil
            }
            if process.hasWorker {
                stop(process)
            } else if case .backoff = process.state {
                setState(process, .stopped)
            }
        }
    }
}
