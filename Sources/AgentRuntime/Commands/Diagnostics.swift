import AgentCommands
import AgentCore
import AgentLoop
import AgentModuleABI
import AgentVersion
import Foundation
import JSONSchema

/// `diagnostics`: what an operator asks first about a running agent — versions, where its
/// files are, the store's figures, the fork server, the outputs, the task notifications, and the limits it runs
/// under. Read on the supervisor's loop; changes nothing.
@LoopActor
enum Diagnostics {
    static func answer(for supervisor: Supervisor) -> DiagnosticsCommand.Answer {
        DiagnosticsCommand.Answer(
            versions: versions(), agent: agent(of: supervisor), paths: paths(of: supervisor), store: supervisor.storeStatus,
            forkServer: supervisor.forkServers.status, outputs: supervisor.outputs?.statistics.map(\.jsonValue) ?? [], limits: limits(of: supervisor),
            notifications: supervisor.work.notifier?.statistics.jsonValue, assignment: supervisor.work.tasks?.assignmentFigures?.json)
    }

    static func versions() -> DiagnosticsCommand.Versions {
        var system = utsname()
        uname(&system)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        return DiagnosticsCommand.Versions(agentRuntime: AgentVersion.current, moduleABI: Int(AGENT_MODULE_ABI_VERSION),
                                           kernel: "\(field(system.sysname)) \(field(system.release)) \(field(system.machine))")
    }

    static func agent(of supervisor: Supervisor) -> DiagnosticsCommand.Agent {
        DiagnosticsCommand.Agent(pid: Int(getpid()), uptime: EventLoop.now() - supervisor.startedAt, processes: supervisor.processes.count,
                                 disabled: supervisor.disabledProcesses.count, workers: supervisor.processes.filter(\.hasWorker).count,
                                 stopping: supervisor.stopping)
    }

    static func paths(of supervisor: Supervisor) -> DiagnosticsCommand.Paths {
        let settingsPath = supervisor.settingsHost.commands?.file.path
        var paths = DiagnosticsCommand.Paths(settings: settingsPath, worker: supervisor.configuration.workerPath)
        if let settingsPath {
            let agentDirectory = (settingsPath as NSString).deletingLastPathComponent
            paths.agentDirectory = agentDirectory
            paths.manifestCache = agentDirectory + "/.agent/cache/manifests.json"
        }
        if let control = supervisor.fronts.paths {
            paths.runDirectory = control.runDirectory
            paths.socket = control.socketPath
            paths.pidfile = control.pidfile
            paths.logFile = control.logFile
        }
        paths.store = supervisor.store?.path
        paths.cgroup = supervisor.containment?.cgroup
        return paths
    }

    static func limits(of supervisor: Supervisor) -> DiagnosticsCommand.Limits {
        var files = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &files)
        let openFiles = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        let control = supervisor.fronts.server.map { server in
            DiagnosticsCommand.Control(maxConnections: server.limits.maximumConnections, idleTimeout: server.limits.idleTimeout,
                                       maxRequestBytes: ControlClient.maximumRequestBytes, maxAnswerBytes: server.limits.maximumAnswerBytes,
                                       openConnections: server.connectionCount)
        }
        // How the workers are contained: a cgroup of their own, or their recorded process groups.
        return DiagnosticsCommand.Limits(files: DiagnosticsCommand.Files(soft: Int(clamping: files.rlim_cur), hard: Int(clamping: files.rlim_max), open: openFiles),
                                         requestBytes: ControlClient.maximumRequestBytes, control: control,
                                         containment: supervisor.containment?.cgroup != nil ? "cgroup" : "process_groups",
                                         sharedRings: supervisor.configuration.sharedRings)
    }
}
