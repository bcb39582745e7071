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
import Logging

/// What `agent-control console` and `validate-settings` do, as a library so that tests and
/// tools call the same code: read the settings, find and build the modules, learn their
/// manifests through workers, validate every process, then (for console) supervise.
public struct AgentLauncher {
    /// Options of a run.
    public struct Options: Sendable {
        public var settingsPath: String = "settings.json"
        /// Build stale Swift modules of the agent before loading them.
        public var build = true
        /// `debug` or `release`; nil picks the configuration agent-control itself was built in.
        public var configuration: String?
        public var json = false
        public var showEvents = true
        /// Start the valid processes even if others are invalid.
        public var skipInvalid = false
        /// Run directory, pidfile and log file overrides (nil: the defaults under the agent's folder).
        public var runDirectory: String?
        public var pidfile: String?
        public var logFile: String?
        /// Detached by `agent-control start`: no terminal; output goes to the log file.
        public var daemon = false
        public var logLevel: Logger.Level = .info
        public init() {}
    }

    /// Exit codes of agent-control and validate-settings.
    public enum ExitCode {
        public static let success: Int32 = 0
        public static let failure: Int32 = 1
        /// The settings or a module are invalid, or there is no settings file; nothing was started.
        public static let invalidConfiguration: Int32 = 2
        /// The command needs a running agent and none answers.
        public static let notRunning: Int32 = 3
        /// A usage error (unknown command or option, bad option value), as ArgumentParser's.
        public static let usage: Int32 = 64
    }

    /// Everything known before anything starts.
    public struct Prepared: Sendable {
        public var settings: AgentSettings
        public var modules: [ModuleLocation]
        public var report: SettingsReport
        /// What each module that was described declares (process types, kinds, schemas).
        public var manifests: [String: ModuleManifest] = [:]
        public var workerPath: String
        /// The signal pipe installed for SIGINT, SIGTERM and SIGHUP (`catchingSignals`), for
        /// the supervisor to take over; -1 when none.
        public var signalFD: Int32 = -1
    }

    /// Why preparing failed before a report could be made.
    public struct PreparationError: Error, CustomStringConvertible {
        public var description: String
        public var exitCode: Int32
        /// Stopped by a signal, as asked: not an error.
        public var stoppedBySignal = false
    }

    public var options: Options
    /// Fronts besides the control socket (the HTTP API), each made from the settings.
    public var fronts: [FrontFactory] = []
    /// Joins a fleet when the settings have `"fleet"` (agent-control passes AgentFleet's
    /// PostgreSQL connector; without one, such settings are refused at start).
    package var fleetConnector: FleetConnector?

    /// Seconds the start waits for the first attempt to join the fleet: a database that
    /// answers is joined before anything starts (a run asked for at once is taken); one that
    /// refuses, or is silent this long, leaves the fleet degraded and the agent starts.
    static let fleetJoinGrace = 5.0

    /// Waits (on the launcher's thread, before the loop runs) for `fleet`'s first attempt to
    /// join to end, at most ``fleetJoinGrace`` seconds.
    static func awaitFirstJoin(_ fleet: any FleetBackend) {
        let deadline = Date().addingTimeInterval(fleetJoinGrace)
        while !fleet.hasTriedToJoin, Date() < deadline { usleep(20_000) }
    }
    public init(options: Options, fronts: [FrontFactory] = []) {
        self.options = options
        self.fronts = fronts
    }

    /// The folder of the running executable (where agent-worker and the runtime's own
    /// module libraries are).
    public static var runtimeDirectory: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().path
    }

    /// The agent-worker executable: `AGENT_WORKER_PATH`, else the one next to this executable.
    public static func workerPath(environment: [String: String]) -> String {
        environment["AGENT_WORKER_PATH"] ?? runtimeDirectory + "/agent-worker"
    }

    /// Reads the settings, locates (and builds) the modules, describes them and validates
    /// every process. Throws only when no report can be made (unreadable settings, no worker),
    /// or when stopped by SIGINT or SIGTERM while building or describing modules
    /// (`catchingSignals`: the signals are caught from before the build on; the build is
    /// stopped, the describe workers killed).
    /// `stopSignals`: ones caught already (the console catches them from its start on).
    /// `describeCgroup`: the workers' cgroup folder, open, for the describe workers (-1: this
    /// process's cgroup).
    public func prepare(logger: Logger, catchingSignals: Bool = false, stopSignals: StopSignals? = nil,
                        describeCgroup: Int32 = -1) throws(PreparationError) -> Prepared {
        let settings: AgentSettings
        do {
            settings = try AgentSettings.load(file: options.settingsPath)
        } catch {
            throw PreparationError(description: "\(error)", exitCode: ExitCode.invalidConfiguration)
        }
        return try prepare(settings, logger: logger, catchingSignals: catchingSignals, stopSignals: stopSignals, describeCgroup: describeCgroup)
    }

    /// ``prepare(logger:catchingSignals:)`` for a settings document already read (one a
    /// settings command is about to write, or checks for a client).
    public func prepare(_ settings: AgentSettings, logger: Logger, catchingSignals: Bool = false,
                        stopSignals caught: StopSignals? = nil, describeCgroup: Int32 = -1) throws(PreparationError) -> Prepared {
        let runtime = Self.runtimeDirectory
        let configuration = options.configuration ?? Self.configuration(of: runtime, agentDirectory: settings.agentDirectory)
        let environment = ProcessInfo.processInfo.environment
        var locator = ModuleLocator(
            agentDirectory: settings.agentDirectory, configuration: configuration,
            searchPath: (environment["AGENT_MODULE_PATH"] ?? "").split(separator: ":").map(String.init),
            runtimeDirectory: runtime)
        let withheld = SecretVariables.names(in: settings.document)
        locator.withheld = withheld
        let workerPath = Self.workerPath(environment: environment)
        guard access(workerPath, X_OK) == 0 else {
            throw PreparationError(description: "cannot find the worker executable at \(workerPath); build it with `swift build` (or set AGENT_WORKER_PATH)", exitCode: ExitCode.failure)
        }
        var (modules, errors) = locator.locateAll(settings.enabledModules)
        // Before anything is built or loaded: a module another user could change is refused.
        func refuseUntrusted() {
            guard !settings.trustModuleFiles else { return }
            for module in modules {
                do throws(ModuleLoadError) {
                    try ModuleLocator.checkTrust(module)
                } catch {
                    errors.append(error)
                }
            }
            modules.removeAll { module in errors.contains { $0.module == module.name } }
        }
        if settings.trustModuleFiles {
            logger.warning("\(settings.file): \"trust_module_files\": true; module files are loaded without checking who could change them")
        }
        refuseUntrusted()
        // From here on a SIGTERM is a request to stop cleanly: a build is stopped, describe
        // workers are killed, and the supervisor, which takes over the pipe, sees any later one.
        let stopSignals = caught ?? (catchingSignals ? StopSignals() : nil)
        func stopped(while doing: String) -> PreparationError? {
            guard let signal = stopSignals?.received else { return nil }
            return PreparationError(description: "stopped by \(SignalName.of(signal)) while \(doing); nothing was started",
                                    exitCode: ExitCode.success, stoppedBySignal: true)
        }
        if options.build {
            for module in modules {
                do {
                    try locator.buildStale([module], stopSignals: stopSignals) { logger.info("\($0)") }
                } catch {
                    errors.append(error)
                }
                if let stop = stopped(while: "building module \(module.name) (the build was stopped)") { throw stop }
            }
            modules.removeAll { module in errors.contains { $0.module == module.name } }
        }
        refuseUntrusted()
        let cacheFile = settings.agentDirectory + "/.agent/cache/manifests.json"
        let describer = ModuleDescriber(workerPath: workerPath, cacheFile: cacheFile)
        describer.stopSignals = stopSignals
        describer.withheld = withheld
        describer.cgroup = describeCgroup
        for warning in describer.cacheWarnings { logger.warning("\(warning)") }
        let (manifests, describeErrors) = describer.describeAll(modules)
        if let (_, module) = describer.interruption, let stop = stopped(while: "describing module \(module) (its describe worker was killed)") {
            throw stop
        }
        var validator = SettingsValidator()
        let report = validator.check(settings, modules: modules, manifests: manifests, moduleErrors: errors + describeErrors)
        return Prepared(settings: settings, modules: modules, report: report, manifests: manifests, workerPath: workerPath,
                        signalFD: stopSignals?.takeFD() ?? -1)
    }

    /// The agent's pidfile, socket and log paths for these options.
    public var paths: AgentPaths {
        AgentPaths(agentDirectory: URL(fileURLWithPath: options.settingsPath).deletingLastPathComponent().standardizedFileURL.path,
                   runDirectory: options.runDirectory, pidfile: options.pidfile, logFile: options.logFile)
    }

    /// The run folder the agent uses when none is given (`.agent/run` in its folder): one only
    /// the agent makes.
    var defaultRunDirectory: String {
        AgentPaths(agentDirectory: URL(fileURLWithPath: options.settingsPath).deletingLastPathComponent().standardizedFileURL.path,
                   environment: [:]).runDirectory
    }

    /// Runs in the foreground until SIGINT/SIGTERM (or `agent-control stop`). Returns the exit code.
    public func runConsole() -> Int32 {
        let paths = self.paths
        // A reader of stdout or stderr that exits (`2>&1 | head`) is an EPIPE to handle, never
        // a signal that ends the agent where it stands, before its loop watches the pipe.
        signal(SIGPIPE, SIG_IGN)
        // Before any thread starts (threads inherit it): SIGCHLD reaches the supervisor's
        // signalfd only if no thread takes it (see Supervisor.watchStops).
        let childSignal: [Int32] = [SIGCHLD]
        _ = childSignal.withUnsafeBufferPointer { agent_block_signals($0.baseAddress, Int32($0.count)) }
        // A SIGTERM from here on stops the agent cleanly, once it runs, rather than ending it
        // where it stands (in the run folder's take, say): the supervisor takes the pipe over.
        let stopSignals = StopSignals()
        // Begun already by agent-control's main; here for a launcher called from elsewhere.
        StartWarmUp.begin()
        // Detached (`start`): the log file is written through its rotation; stdout and stderr,
        // which `start` pointed at it, follow it when it is rotated or reopened.
        var logFileProblem: String?
        var logFile: AgentLogFile?
        if options.daemon {
            do { logFile = try AgentLogFile(path: paths.logFile) } catch { logFileProblem = "\(error); the log is not rotated" }
        }
        // stderr through a thread of its own: a reader that stops reading (a paused pager, a
        // stalled journal) must not hold the loop, which logs.
        let stderrWriter = logFile == nil ? DescriptorLineWriter(fd: 2) : nil
        let logger = Logger(label: "agent") { [logFile] in
            AgentLogHandler(label: $0, fd: 2, level: options.logLevel, file: logFile, writer: stderrWriter)
        }
        // The console's own writer, when stdout is not the log's file (set below).
        var consoleWriter: DescriptorLineWriter?
        // Last, after the run folder is released: what the outputs' readers did not take is said
        // in the log, and the log gets a moment for it even when stdout took the whole wait.
        defer {
            let end = Date(timeIntervalSinceNow: DescriptorLineWriter.exitWait)
            if let unwritten = consoleWriter?.finish(until: end), unwritten > 0 {
                logger.warning("\(unwritten) line(s) of the console's output were not written: its reader did not read them for \(Int(DescriptorLineWriter.exitWait)) s")
            }
            stderrWriter?.finish(until: max(end, Date(timeIntervalSinceNow: 0.2)))
        }
        if let logFileProblem { logger.warning("\(logFileProblem)") }
        // Taken from the environment, then removed from it before anything is spawned (the
        // fork server, module builds, command tasks): no child may speak for the service.
        let systemd: SystemdNotifier?
        do {
            systemd = try SystemdNotifier.fromEnvironment(ProcessInfo.processInfo.environment)
        } catch {
            logger.warning("\(error); systemd is not notified")
            systemd = nil
        }
        for key in SystemdNotifier.environmentKeys { unsetenv(key) }
        let pidfile = Pidfile(path: paths.pidfile)
        guard let containment = takeRunFolder(paths, pidfile: pidfile, logger: logger) else { return ExitCode.failure }
        defer { pidfile.release() }
        // Finished last: after the fork server is gone.
        defer { containment.finish() }
        // Children never get the agent's secrets (the variables its settings name as ${env:NAME}).
        let withheld = SecretVariables.names(inSettingsFile: options.settingsPath)
        let environment = ProcessInfo.processInfo.environment.merging(containment.environment) { _, new in new }
            .filter { !SystemdNotifier.environmentKeys.contains($0.key) && !withheld.contains($0.key) }
        ProcessSpawner.keepProcessesForSelf()
        // The fork server starts first, so that it loads while the settings are read and
        // checked; it is ready when the first worker is wanted.
        var forkServer = Self.startForkServer(logger: logger, environment: environment, cgroup: containment.workersCgroupFD)
        defer { forkServer?.shutDown() }
        // Recorded now, while the server loads (the supervisor's hand-over would write it on the
        // way to the first spawn).
        if let forkServer { containment.forkServerStarted(forkServer.pid) }
        let prepared: Prepared
        do {
            prepared = try prepare(logger: logger, catchingSignals: true, stopSignals: stopSignals, describeCgroup: containment.workersCgroupFD)
        } catch {
            if error.stoppedBySignal {
                logger.notice("\(error.description)")
            } else {
                Self.printError(error.description)
            }
            return error.exitCode
        }
        logFile?.configure(prepared.settings.log)
        var signalFD = prepared.signalFD
        defer { if signalFD >= 0 { close(signalFD) } }
        let report = prepared.report
        if !report.isValid {
            let issues = report.blockingIssues
            if options.skipInvalid, !report.planned.isEmpty {
                Self.printError("skipping invalid processes (--skip-invalid):\n" + issues.map { "  \($0)" }.joined(separator: "\n"))
            } else {
                Self.printError("\(SettingsError(issues))\nnothing was started\(report.planned.isEmpty ? "" : "; --skip-invalid starts the \(report.planned.count) valid process(es)")")
                return ExitCode.invalidConfiguration
            }
        }
        let console = ConsoleOutput(json: options.json, showEvents: options.showEvents)
        console.logFile = logFile
        // stdout too: a `--json` reader that stalls must not hold the loop (through the log's
        // writer when stdout is the log's file: a terminal, `2>&1`, the journal). Finished after
        // the supervisor's last flush; what a reader still away did not take is said in the log.
        let sharedWriter = ConsoleOutput.sameFile(1, 2) ? stderrWriter : nil
        let written = console.writeThroughThread(sharing: sharedWriter)
        if written !== sharedWriter { consoleWriter = written }
        let supervisor = Supervisor.make(
            configuration: SupervisorConfiguration(workerPath: prepared.workerPath, environment: environment),
            processes: report.planned, console: console, logger: logger)
        let store: AgentStore?
        switch Self.openStore(prepared.settings, logger: logger) {
        case .success(let opened): store = opened
        case .failure(let problem):
            Self.printError("\(prepared.settings.file): /store: \(problem.message)\nnothing was started")
            return ExitCode.failure
        }
        var fleet: (any FleetBackend)?
        if let settings = prepared.settings.fleet {
            guard let fleetConnector else {
                Self.printError("\(prepared.settings.file): /fleet: this build of agent-control cannot join a fleet: it was built without the trait Fleet (swift build --disable-default-traits); build it with the default traits (swift build)\nnothing was started")
                return ExitCode.invalidConfiguration
            }
            do {
                fleet = try fleetConnector(settings, logger)
                if let fleet { Self.awaitFirstJoin(fleet) }
                // The store's retention covers the fleet's shared runs as the agent's own.
                fleet?.retain(RunRetention(maximumAge: prepared.settings.store.maximumAge, maximumRuns: prepared.settings.store.maximumRuns))
            } catch {
                store?.close()
                Self.printError("\(prepared.settings.file): /fleet: \(error)\nnothing was started")
                return ExitCode.failure
            }
        }
        var outputs: OutputHub?
        if let settings = prepared.settings.document["outputs"] {
            do {
                outputs = try OutputHub(json: settings, baseDirectory: prepared.settings.agentDirectory, logger: logger)
            } catch {
                store?.close()
                fleet?.close()
                Self.printError("\(prepared.settings.file): /outputs\(error.description.hasPrefix("/") ? "" : ": ")\(error)\nnothing was started")
                return ExitCode.invalidConfiguration
            }
        }
        let checker = SettingsChecker(options: options, logger: logger, startedDocument: prepared.settings.document)
        let settingsFile = SettingsFile(path: AgentPaths.absolute(options.settingsPath))
        let fronts = self.fronts
        // Handed over on the loop (this thread's). The containment stays shared with the defer
        // above, which finishes it on this thread once `run()` has returned.
        nonisolated(unsafe) let sharedContainment = containment
        let handedSignalFD = signalFD
        signalFD = -1
        let server = forkServer
        forkServer = nil
        let refused: Int32? = supervisor.inbox.isolated {
            // The console gives back the code pages only its start touched, unless
            // `AGENT_RELEASE_START_PAGES=0`; an embedded supervisor leaves its host's pages alone.
            if !SupervisorConfiguration.switchedOff("AGENT_RELEASE_START_PAGES", in: environment) {
                StartPages.releaseOnceSettled(loop: supervisor.loop, logger: supervisor.logger, stopping: { [unowned supervisor] in supervisor.stopping },
                                              settled: { [unowned supervisor] in supervisor.firstStartsSettled })
            }
            supervisor.fronts.paths = paths
            supervisor.systemd.notifier = systemd
            supervisor.disabledProcesses = report.disabledProcesses
            supervisor.signals.signalFD = handedSignalFD
            supervisor.containment = sharedContainment
            // Explicit wiring: the parts that use the store, the fleet and the outputs get them
            // before the work is set up.
            supervisor.attach(store: store, fleet: fleet, outputs: outputs)
            supervisor.settingsHost.reloader = { checker.check(nil).map(\.report) }
            supervisor.settingsHost.commands = SettingsCommands(file: settingsFile, checker: checker)
            // The fronts are made here (bad settings stop the start with nothing started) and
            // listen beside the first spawns: nothing the first worker need not wait for is on
            // its path. Commands they take wait for the loop.
            let commands = supervisor.makeCommandCenter(storePath: supervisor.store?.path)
            let context = FrontContext(commands: commands, http: prepared.settings.http, logger: logger)
            supervisor.settingsHost.httpCredentials = context.credentials
            var made: [any AgentFront] = []
            do {
                for factory in fronts {
                    guard let front = try factory(context) else { continue }
                    made.append(front)
                }
            } catch {
                supervisor.fronts.close()
                server?.shutDown()
                Self.printError("\(error)\nnothing was started")
                return ExitCode.failure
            }
            let modules = prepared.modules.isEmpty ? "none" : prepared.modules.map(\.name).joined(separator: ", ")
            logger.info("agent in \(prepared.settings.agentDirectory): modules \(modules); \(report.planned.count) process(es); Ctrl-C stops")
            if made.isEmpty {
                logger.info("\(Self.dashboardLine(nil)); from another terminal: agent-control status, agent-control chat")
            }
            // Handed over last: until here, an early return shuts it down.
            supervisor.useForkServer(server)
            supervisor.fronts.startBeside(made, inbox: supervisor.inbox, logger: supervisor.logger) { [unowned supervisor] in supervisor.stopAll() }
            return nil
        }
        if let refused { return refused }
        // The first worker's fork does not wait for the work's set-up (its run store, its
        // recovered runs): the fork server forks it meanwhile.
        supervisor.run { [unowned supervisor] in
            supervisor.work.setUp(report.workDefinitions, agentDirectory: prepared.settings.agentDirectory,
                                  notifications: prepared.settings.document["notifications"], containment: sharedContainment)
        }
        return supervisor.inbox.isolated { supervisor.fronts.exitStatus }
    }

    /// What the start line says of the dashboard: where it is, or how to turn it on.
    static func dashboardLine(_ address: String?) -> String {
        guard let address else {
            return #"no dashboard: "http": {"listen": "127.0.0.1:8080", "tokens": ["${env:AGENT_API_TOKEN}"]} in the settings serves it and the HTTP API"#
        }
        return "dashboard and HTTP API at \(address)"
    }

    /// Makes and checks the run folder (another user's, or one others can write, is refused
    /// before anything in it is read or written), takes the pidfile, then kills what a killed
    /// earlier run left and gives this run's workers a cgroup (or writes their process groups
    /// down). Nil, the reason printed and the pidfile released, when the agent must not start.
    private func takeRunFolder(_ paths: AgentPaths, pidfile: Pidfile, logger: Logger) -> WorkerContainment? {
        do {
            let created = try paths.createDirectories()
            try RunFolder.check(paths.runDirectory, madeByAgent: created || paths.runDirectory == defaultRunDirectory, logger: logger)
            try pidfile.acquire()
        } catch {
            Self.printError("\(error)")
            return nil
        }
        do {
            return try WorkerContainment.prepare(runDirectory: paths.runDirectory, logger: logger)
        } catch {
            pidfile.release()
            Self.printError("\(error)")
            return nil
        }
    }

    /// A fork server for the workers, unless `AGENT_FORK_SERVER=0` or it cannot start (then
    /// workers are spawned with posix_spawn).
    static func startForkServer(logger: Logger, environment: [String: String] = ProcessInfo.processInfo.environment,
                                cgroup: Int32 = -1) -> ForkServer? {
        guard !ForkServer.isDisabled(in: environment) else { return nil }
        let workerPath = workerPath(environment: environment)
        guard access(workerPath, X_OK) == 0 else { return nil }
        // Workers inherit the limits the server had when it started, as spawned ones inherit
        // the supervisor's.
        LaunchedWorker.raiseFileLimit()
        switch ForkServer.start(workerPath: workerPath, environment: environment, cgroup: cgroup) {
        case .success(let server):
            return server
        case .failure(let error):
            logger.warning("\(error); workers are started with posix_spawn")
            return nil
        }
    }

    /// Why an enabled store could not be opened.
    struct StoreOpenFailure: Error {
        var message: String
    }

    /// Opens the store the settings describe (nil: disabled there). One that cannot be opened
    /// stops the start: the agent would answer runs, events and memory writes "ok" that it
    /// cannot keep ("acknowledged means durable"), and lose them at its next start.
    static func openStore(_ settings: AgentSettings, logger: Logger) -> Result<AgentStore?, StoreOpenFailure> {
        guard settings.store.enabled else {
            logger.notice("the store is disabled in the settings: events, state and history are not kept")
            return .success(nil)
        }
        let path = settings.store.databasePath(agentDirectory: settings.agentDirectory)
        do {
            let store = try AgentStore(path: path, settings: settings.store, logger: logger)
            logger.info("store: \(path)")
            return .success(store)
        } catch {
            return .failure(StoreOpenFailure(message: "cannot open the store \(path): \(error). The agent does not start without the store it would "
                + "acknowledge runs, events and memory writes into: stop the agent that uses it if it says so, free the disk, or move a damaged "
                + "file away (a new one is then made); or set \"store\": {\"path\": …} elsewhere, or \"store\": {\"enabled\": false} to run without one"))
        }
    }

    /// `release` when the executable runs from the agent's own `.build/…/release`, else `debug`.
    static func configuration(of runtimeDirectory: String, agentDirectory: String) -> String {
        let last = URL(fileURLWithPath: runtimeDirectory).lastPathComponent
        return runtimeDirectory.hasPrefix(agentDirectory + "/.build/") && last == "release" ? "release" : "debug"
    }

    static func printError(_ text: String) {
        // After the log lines that explain it, which may still wait in the stderr writer.
        DescriptorLineWriter.drainAll(fd: 2)
        TerminalStyle.printError(text)
    }
}
