import AgentBase
import AgentCommands
import AgentCore
import AgentLoop
import AgentOutputs
import AgentStore
import AgentSupervision
import AgentWork
import CAgentSystem
import Foundation
import JSONSchema
import Logging

/// Runs every enabled process of an agent as its own worker process, routes events between
/// them, restarts the ones that die, and stops them all on SIGINT/SIGTERM.
///
/// Everything happens on the thread that calls ``run()`` (spawn included, so that workers'
/// parent-death signal follows a thread that lives as long as the supervisor).
public final class Supervisor {
    public let configuration: SupervisorConfiguration
    let console: ConsoleOutput
    package let logger: Logger
    package let loop = EventLoop()
    /// Each process's recent output and the log lines about it (`agent-control logs`).
    public let processLog = ProcessLog()

    private(set) var processes: [SupervisedProcess] = []
    private(set) var byName: [String: SupervisedProcess] = [:]
    /// Processes the settings list with `"enabled": false`: not run, but shown by `status`
    /// as `disabled` (set at start and by each reload).
    public var disabledProcesses: [DisabledProcess] = []
    /// Processes removed or replaced by a reload, until their workers are gone.
    var retiring: [SupervisedProcess] = []
    /// Re-reads and validates the settings for `reload` (nil: reload is refused).
    public var reloader: (() -> Result<SettingsReport, ControlError>)?
    /// The settings commands: settings_get, settings_change, validate, modules (nil: refused).
    var settingsCommands: SettingsCommands?
    /// Where the control socket goes (nil: no control socket).
    public var controlPaths: AgentPaths?
    var control: ControlServer?
    /// The command layer of the other fronts (see ``makeCommandCenter(storePath:)``).
    var commandCenter: CommandCenter?
    /// Fronts to stop once the loop takes no more commands (started by the launcher).
    public var fronts: [any AgentFront] = []
    var queryRunner: QueryRunner?
    /// The work layer: task runs (see ``TaskCoordinator``; set up by ``setUpTasks(_:)``).
    var tasks: TaskCoordinator?
    /// The schedules (see ``Scheduler``; set up by ``setUpSchedules(_:)``).
    var scheduler: Scheduler?
    /// The workflows (see ``WorkflowEngine``; set up by ``setUpWorkflows(_:roles:)``).
    var workflows: WorkflowEngine?
    /// The fleet's shared database (nil: this agent keeps its runs and schedules to itself).
    /// Set before ``setUpTasks(_:agentDirectory:notifications:)``.
    package var fleet: (any FleetBackend)? {
        didSet {
            fleetPublished = Set(fleet?.settings.publish ?? [])
            setUpMemory()
            // Each source looks up again whether the type it emits is published.
            routingGeneration += 1
        }
    }
    var fleetTimers: [String: Int] = [:]
    /// Event types this agent publishes to the fleet (`fleet.publish`); nothing else leaves it.
    var fleetPublished: Set<String> = []
    /// Where this agent got to in the fleet's events its monitors subscribe to.
    var fleetEvents = FleetEventReader()
    var leadershipBid = LeadershipBid()
    /// A read of the fleet's members is in flight (``readFleetMembers()``).
    var fleetMembersReading = false
    /// Notifications about task runs (see ``TaskNotifier``; set up with the tasks).
    public internal(set) var taskNotifier: TaskNotifier?
    /// The module task types of the settings' tasks (set at start and by each reload): where
    /// the module runner finds their executors' libraries.
    public var moduleTaskTypes: [String: ModuleTaskType] = [:]
    /// Event type → tasks with an `on_event` trigger for it (see ``Supervisor+Work``).
    var taskTriggers: [String: [TaskTrigger]] = [:]
    /// The tasks' own triggers (``taskTriggers`` adds the workflows' wanted types).
    var ownTaskTriggers: [String: [TaskTrigger]] = [:]
    var pendingChats: [String: PendingChat] = [:]
    /// Warm spare workers by module library, and the libraries that want one.
    var spares: [String: LaunchedWorker] = [:]
    var sparesWanted: Set<String> = []
    /// Processes waiting for their first start (see ``startInTurns(_:)``).
    var pendingStarts: [SupervisedProcess] = []
    var chatSequence = 0
    /// The counters of processes that reloads removed or replaced (see ``foldIntoTotals(_:)``).
    var retiredTotals = AgentSnapshot.Totals()
    /// Forks workers when set (see ``ForkServer``); the supervisor shuts it down at the end of
    /// ``run()``. Start it from the thread that runs the supervisor.
    public var forkServer: ForkServer? {
        didSet {
            // Given one, the supervisor keeps one: it restarts a server that dies.
            if forkServer != nil { forkServerRecovery.wanted = true }
            watchForkServer()
        }
    }
    /// Where the workers' process groups are written down (without a cgroup), nil: nowhere.
    public var containment: WorkerContainment?
    var forkServerRecovery = ForkServerRecovery()
    /// Configured outputs (nil: none).
    public var outputs: OutputHub? {
        didSet {
            updateEventTaps()
            taskNotifier?.outputs = outputs
        }
    }
    /// Shared memory (see ``MemoryStore``): the fleet's, else in the store, nil without either.
    var memory: (any MemoryStore)?
    /// The embedded store (nil: running without it).
    public var store: AgentStore? {
        didSet {
            setUpMemory()
            loadSavedStates()
            updateEventTaps()
        }
    }
    /// Whether routing hands events to more than their subscribers (console, store, outputs):
    /// one flag read per event instead of three.
    private(set) var tapsEvents = false
    let startedAt = EventLoop.now()
    /// Event type → processes subscribed to it; `*` subscribers receive every type.
    var subscribers: [String: [SupervisedProcess]] = [:]
    var wildcardSubscribers: [SupervisedProcess] = []
    /// Replicas subscribed by event type: each event goes to one replica of each group.
    var groupSubscribers: [String: [ReplicaGroup]] = [:]
    var wildcardGroups: [ReplicaGroup] = []
    /// The processes with `replicas`, by their name in the settings.
    var replicaGroups: [String: ReplicaGroup] = [:]
    var routingGeneration = 0
    var dirtyProcesses: [SupervisedProcess] = []

    var stopping = false
    /// Notifies systemd of readiness, reloads, stops, the status and the loop's liveness
    /// (see ``Supervisor+Systemd``); nil when not run as a `Type=notify` service.
    public var systemd: SystemdNotifier?
    var systemdReadySent = false
    var systemdReloading = false
    var systemdStatusDirty = false
    var systemdLastFailure: String?
    /// A detached agent's log file: rotated as the settings' `log` says, reopened on SIGUSR1.
    public var logFile: AgentLogFile?
    var deadlineTimer: Int?
    /// Orphans of dead workers being killed: pid → command name.
    var orphans: [Int32: String] = [:]
    var orphanSweepScheduled = false
    /// Whether ``run()`` made this process a child subreaper (see `sweepOrphans`).
    var isSubreaper = false
    /// The signal pipe; one installed before the supervisor runs (by the launcher, so that no
    /// signal is lost in between) is taken over.
    var signalFD: Int32 = -1
    /// A signalfd for SIGCHLD: workers stopped or continued by a signal (see ``watchStops()``).
    var childSignalFD: Int32 = -1
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
    let deliveryScratch = FrameBuffer()

    /// Supervises the planned processes (see ``SettingsValidator``).
    public init(configuration: SupervisorConfiguration, processes planned: [PlannedProcess], console: ConsoleOutput, logger: Logger) {
        self.configuration = configuration
        self.console = console
        self.logger = ProcessLogHandler.teeing(logger, into: processLog)
        setProcesses(planned.map(SupervisedProcess.init))
        updateEventTaps()
    }

    private func updateEventTaps() {
        tapsEvents = console.showEvents || store != nil || outputs?.wants(.event) == true
    }

    /// Gives every process the state it saved in an earlier run.
    func loadSavedStates() {
        guard let store else { return }
        let states = store.loadStates()
        for process in processes where process.savedState == nil { process.savedState = states[process.name] }
    }

    func setProcesses(_ list: [SupervisedProcess]) {
        let previous = processes
        processes = list
        byName = Dictionary(list.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        // A process removed by a reload loses its log; a kept or changed one keeps it.
        processLog.keep(byName.keys)
        rebuildRouting()
        foldIntoTotals(previous)
    }

    deinit { readBuffer.deallocate() }

    func rebuildRouting() {
        subscribers = [:]
        wildcardSubscribers = []
        groupSubscribers = [:]
        wildcardGroups = []
        replicaGroups = [:]
        for process in processes {
            if let groupName = process.planned.replicaOf {
                let group: ReplicaGroup
                if let existing = replicaGroups[groupName] {
                    group = existing
                } else {
                    group = ReplicaGroup(name: groupName)
                    replicaGroups[groupName] = group
                    // The group subscribes once, as its replicas' settings are one.
                    for type in process.subscriptions {
                        if type == "*" { wildcardGroups.append(group) } else { groupSubscribers[type, default: []].append(group) }
                    }
                }
                group.add(process)
                continue
            }
            for type in process.subscriptions {
                if type == "*" { wildcardSubscribers.append(process) } else { subscribers[type, default: []].append(process) }
            }
        }
        routingGeneration += 1
    }

    public func process(named name: String) -> SupervisedProcessInfo? {
        byName[name].map(SupervisedProcessInfo.init)
    }

    /// A snapshot of every process.
    public var snapshot: [SupervisedProcessInfo] { processes.map(SupervisedProcessInfo.init) }

    // MARK: Running

    /// Starts every process and runs until SIGINT or SIGTERM; then stops them all (gracefully,
    /// then SIGKILL after the stop timeout) and returns.
    public func run() {
        installSignals()
        watchStops()
        becomeSubreaper()
        Self.raiseFileLimit()
        if let controlPaths {
            do {
                control = try ControlServer(paths: controlPaths, loop: loop, limits: ControlLimits(environment: configuration.environment),
                                            logger: logger) { [unowned self] request, respond in executeControl(request, respond: respond) }
                logger.info("control socket: \(controlPaths.socketPath)")
            } catch {
                logger.error("\(error); agent-control status/stop/reload will not reach this agent")
            }
        }
        defer {
            control?.close()
            control = nil
            commandCenter?.close()
            for front in fronts { front.stop() }
            fronts = []
        }
        if processes.isEmpty { logger.warning("no enabled process in the settings; waiting for a signal to stop") }
        if !configuration.sharedRings { logger.notice("AGENT_SHARED_RINGS=0: events go to and from workers on their sockets") }
        startSystemdNotifications()
        watchConsolePipe()
        startInTurns(processes)
        startQueries()
        startFleet()
        // Running task runs get their grace to end (and are recorded) before the agent goes.
        while !(stopping && processes.allSatisfy { !$0.hasWorker } && retiring.isEmpty && orphans.isEmpty && tasks?.hasRunsGoing != true) {
            afterLoopTurn()
            loop.runOnce()
        }
        // What the last workers left behind.
        sweepOrphans()
        run(until: { orphans.isEmpty }, timeout: 2)
        dropForkServer()
        unwatchStops()
        console.flush()
        // Before the outputs: its last records go to them.
        taskNotifier?.stop(timeout: 5)
        outputs?.stop(timeout: 5)
        queryRunner?.stop()
        fleet?.close()
        store?.close()
        logger.info("all workers stopped")
    }

    /// Runs the loop until `condition` holds or `timeout` passes (for tests and tools that
    /// embed the supervisor).
    public func run(until condition: () -> Bool, timeout: Double) {
        let deadline = EventLoop.now() + timeout
        while !condition(), EventLoop.now() < deadline {
            afterLoopTurn()
            loop.runOnce(maxWait: min(0.05, deadline - EventLoop.now()))
        }
        afterLoopTurn()
    }

    func afterLoopTurn() {
        flushDirty()
        console.flush()
        if console.readerGone, !stopping {
            logger.notice("the console's output was closed (its reader exited); stopping all processes")
            stopAll()
        }
        notifySystemdAfterTurn()
    }

    /// A pipe on stdout whose reader exits (`console --json | head -8`) reports a hang-up at
    /// once: the agent stops then, rather than at its next line's failed write.
    private func watchConsolePipe() {
        guard let fd = console.pipeDescriptor else { return }
        loop.register(fd, events: 0) { [unowned self] events in
            guard events & EventLoop.hangup != 0 else { return }
            loop.unregister(fd)
            console.pipeClosed()
        }
    }

    /// Stops using the fork server: no longer watched, shut down and reaped.
    func dropForkServer() {
        guard let server = forkServer else { return }
        if server.pidFD >= 0 { loop.unregister(server.pidFD) }
        server.shutDown()
        forkServer = nil
    }

    /// A fork server that dies is reaped and, after a backoff, replaced; workers are spawned
    /// with posix_spawn meanwhile.
    private func watchForkServer() {
        guard let server = forkServer, server.pidFD >= 0 else { return }
        let fd = server.pidFD
        let pid = server.pid
        loop.register(fd) { [unowned self, unowned server] _ in
            loop.unregister(fd)
            let how = server.reapAfterDeath()
            // Last use of `server`: the line below releases it.
            if forkServer === server { forkServer = nil }
            forkServerFailed("the fork server (pid \(pid)) \(how)")
        }
    }

    /// Each worker costs the supervisor four descriptors (socket, two output pipes, pidfd): lift
    /// the soft limit to the hard one so that hundreds of workers fit.
    static func raiseFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// SIGUSR1: the log file was moved away (logrotate); a new one is opened at its path.
    private func reopenLogFile() {
        guard let logFile else {
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
        if logFile?.reopenIfMoved() == true { logger.notice("reopened the log file \(logFile?.path ?? ""): it had been moved") }
        let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGUSR1]
        if signalFD < 0 {
            signalFD = signals.withUnsafeBufferPointer { agent_signal_pipe($0.baseAddress, Int32($0.count)) }
        }
        guard signalFD >= 0 else {
            logger.error("cannot install signal handlers: \(String(cString: strerror(errno)))")
            return
        }
        loop.register(signalFD) { [unowned self] _ in
            var byte: UInt8 = 0
            while read(signalFD, &byte, 1) == 1 {
                let signal = Int32(byte)
                if signal == SIGHUP {
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
                    tasks?.endStop()
                }
            }
        }
    }

    /// Asks every worker to stop; SIGKILL follows after the stop timeout.
    public func stopAll() {
        let wasStopping = stopping
        stopping = true
        if !wasStopping { notifySystemdStopping() }
        scheduler?.shutDown()
        workflows?.shutDown()
        tasks?.shutDown()
        stopFleet()
        dropSpares()
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
