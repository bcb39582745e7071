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
    let logger: Logger
    let loop = EventLoop()

    private(set) var processes: [SupervisedProcess] = []
    private var byName: [String: SupervisedProcess] = [:]
    /// Event type → processes subscribed to it; `*` subscribers receive every type.
    var subscribers: [String: [SupervisedProcess]] = [:]
    var wildcardSubscribers: [SupervisedProcess] = []
    var routingGeneration = 0
    var dirtyProcesses: [SupervisedProcess] = []

    var stopping = false
    private var signalFD: Int32 = -1
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
    var deliveryScratch: [UInt8] = []

    /// Resolves process types against the modules' manifests; every problem is reported.
    public init(
        configuration: SupervisorConfiguration, settings: AgentSettings, modules: [ModuleLocation],
        manifests: [String: ModuleManifest], console: ConsoleOutput, logger: Logger
    ) throws {
        self.configuration = configuration
        self.console = console
        self.logger = logger
        processes = try Self.plan(settings: settings, modules: modules, manifests: manifests)
        for process in processes { byName[process.name] = process }
        rebuildRouting()
    }

    deinit { readBuffer.deallocate() }

    /// Matches every enabled process with the module that provides its type.
    static func plan(settings: AgentSettings, modules: [ModuleLocation], manifests: [String: ModuleManifest]) throws -> [SupervisedProcess] {
        var issues: [SettingsIssue] = []
        var planned: [SupervisedProcess] = []
        let allTypes = modules.flatMap { manifests[$0.name]?.processes.map(\.type) ?? [] }
        for process in settings.enabledProcesses {
            let providers = modules.filter { manifests[$0.name]?.processType(process.type) != nil }
            let chosen: ModuleLocation?
            if let wanted = process.module {
                chosen = providers.first { $0.name == wanted }
                if chosen == nil {
                    issues.append(SettingsIssue(file: settings.file, pointer: process.pointer + "/module", message: "module \"\(wanted)\" is not enabled or has no process type \"\(process.type)\"", process: process.name))
                    continue
                }
            } else if providers.count > 1 {
                issues.append(SettingsIssue(file: settings.file, pointer: process.pointer + "/type", message: "process type \"\(process.type)\" is provided by several modules (\(providers.map(\.name).joined(separator: ", "))); add \"module\": \"<name>\" to choose one", process: process.name))
                continue
            } else {
                chosen = providers.first
            }
            guard let module = chosen, let type = manifests[module.name]?.processType(process.type) else {
                let known = allTypes.map { "\"\($0)\"" }.joined(separator: ", ")
                issues.append(SettingsIssue(file: settings.file, pointer: process.pointer + "/type",
                    message: "unknown process type \"\(process.type)\"\(Suggestions.hint(for: process.type, in: allTypes)); the enabled modules (\(modules.map(\.name).joined(separator: ", "))) provide \(known.isEmpty ? "none" : known)",
                    process: process.name))
                continue
            }
            if process.subscribe != nil, type.kind == "datasource" {
                issues.append(SettingsIssue(file: settings.file, pointer: process.pointer + "/subscribe", message: "\"\(process.type)\" is a datasource; only monitors receive events", process: process.name))
            }
            planned.append(SupervisedProcess(
                name: process.name, type: process.type, kind: type.kind, module: module,
                settings: process.moduleSettings, subscriptions: process.subscribe ?? type.subscribes))
        }
        if !issues.isEmpty { throw SettingsError(issues) }
        return planned
    }

    func rebuildRouting() {
        subscribers = [:]
        wildcardSubscribers = []
        for process in processes {
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
        if processes.isEmpty { logger.warning("no enabled process in the settings; waiting for a signal to stop") }
        for process in processes { spawn(process) }
        while !(stopping && processes.allSatisfy { !$0.hasWorker }) {
            afterLoopTurn()
            loop.runOnce()
        }
        console.flush()
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
    }

    private func installSignals() {
        signal(SIGPIPE, SIG_IGN)
        let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]
        signalFD = signals.withUnsafeBufferPointer { agent_signal_pipe($0.baseAddress, Int32($0.count)) }
        guard signalFD >= 0 else {
            logger.error("cannot install signal handlers: \(String(cString: strerror(errno)))")
            return
        }
        loop.register(signalFD) { [unowned self] _ in
            var byte: UInt8 = 0
            while read(signalFD, &byte, 1) == 1 {
                let signal = Int32(byte)
                if signal == SIGHUP {
                    logger.notice("SIGHUP received; reloading settings is not supported yet, ignoring")
                } else if !stopping {
                    logger.notice("\(SignalName.of(signal)) received; stopping all processes")
                    stopAll()
                } else {
                    logger.notice("\(SignalName.of(signal)) received again; still waiting for workers to stop")
                }
            }
        }
    }

    /// Asks every worker to stop; SIGKILL follows after the stop timeout.
    public func stopAll() {
        stopping = true
        for process in processes {
            if let timer = process.restartTimer {
                loop.cancel(timer)
                process.restartTimer = nil
            }
            if process.hasWorker {
                stop(process)
            } else if case .backoff = process.state {
                process.state = .stopped
            }
        }
    }
}

/// What users see of a supervised process.
public struct SupervisedProcessInfo: Sendable, Equatable {
    public var name: String
    public var type: String
    public var module: String
    public var state: ProcessState
    public var pid: Int32
    public var restarts: Int
    public var lastExit: String?
    public var eventsEmitted: Int
    public var eventsDelivered: Int
    public var eventsDropped: Int

    init(_ process: SupervisedProcess) {
        name = process.name
        type = process.type
        module = process.module.name
        state = process.state
        pid = process.pid
        restarts = process.restarts
        lastExit = process.lastExit
        eventsEmitted = process.eventsEmitted
        eventsDelivered = process.eventsDelivered
        eventsDropped = process.eventsDropped
    }
}
