import AgentBase
import AgentSupervision
import AgentWork
import JSONSchema

/// `diagnostics`: what an operator asks first when something is wrong.
package enum DiagnosticsCommand: AgentCommand {
    package typealias Host = any SupervisionCommandHost

    /// Versions, the agent, paths, the store's figures, the fork server, outputs, limits, and
    /// the task notifications' and executors' figures when there are tasks. The store, fork
    /// server, outputs, notifications and assignment figures are as `status` shows them.
    package struct Answer: Encodable, Sendable {
        package let ok = true
        package var versions: Versions
        package var agent: Agent
        package var paths: Paths
        package var store: JSONValue
        package var forkServer: JSONValue
        package var outputs: [JSONValue]
        package var limits: Limits
        package var notifications: JSONValue?
        package var assignment: JSONValue?

        package init(versions: Versions, agent: Agent, paths: Paths, store: JSONValue, forkServer: JSONValue, outputs: [JSONValue], limits: Limits,
                     notifications: JSONValue? = nil, assignment: JSONValue? = nil) {
            self.versions = versions
            self.agent = agent
            self.paths = paths
            self.store = store
            self.forkServer = forkServer
            self.outputs = outputs
            self.limits = limits
            self.notifications = notifications
            self.assignment = assignment
        }

        enum CodingKeys: String, CodingKey {
            case ok, versions, agent, paths, store, forkServer = "fork_server", outputs, limits, notifications, assignment
        }
    }

    package struct Versions: Encodable, Sendable {
        package var agentRuntime: String
        package var moduleABI: Int
        /// `Linux 6.8.0 x86_64`.
        package var kernel: String

        package init(agentRuntime: String, moduleABI: Int, kernel: String) {
            self.agentRuntime = agentRuntime
            self.moduleABI = moduleABI
            self.kernel = kernel
        }

        enum CodingKeys: String, CodingKey {
            case agentRuntime = "agent_runtime", moduleABI = "module_abi", kernel
        }
    }

    package struct Agent: Encodable, Sendable {
        package var pid: Int
        package var uptime: Double
        package var processes: Int
        package var disabled: Int
        package var workers: Int
        package var stopping: Bool

        package init(pid: Int, uptime: Double, processes: Int, disabled: Int, workers: Int, stopping: Bool) {
            self.pid = pid
            self.uptime = uptime
            self.processes = processes
            self.disabled = disabled
            self.workers = workers
            self.stopping = stopping
        }
    }

    /// Where the agent's files are; `settings`, `store` and `cgroup` are null when it has none.
    package struct Paths: Encodable, Sendable {
        package var settings: String?
        package var worker: String
        package var agentDirectory: String?
        package var manifestCache: String?
        package var runDirectory: String?
        package var socket: String?
        package var pidfile: String?
        package var logFile: String?
        package var store: String?
        package var cgroup: String?

        package init(settings: String?, worker: String) {
            self.settings = settings
            self.worker = worker
        }

        enum CodingKeys: String, CodingKey {
            case settings, worker, agentDirectory = "agent_directory", manifestCache = "manifest_cache", runDirectory = "run_directory"
            case socket, pidfile, logFile = "log_file", store, cgroup
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(settings, forKey: .settings)
            try container.encode(worker, forKey: .worker)
            try container.encodeIfPresent(agentDirectory, forKey: .agentDirectory)
            try container.encodeIfPresent(manifestCache, forKey: .manifestCache)
            try container.encodeIfPresent(runDirectory, forKey: .runDirectory)
            try container.encodeIfPresent(socket, forKey: .socket)
            try container.encodeIfPresent(pidfile, forKey: .pidfile)
            try container.encodeIfPresent(logFile, forKey: .logFile)
            try container.encode(store, forKey: .store)
            try container.encode(cgroup, forKey: .cgroup)
        }
    }

    package struct Limits: Encodable, Sendable {
        package var files: Files
        package var requestBytes: Int
        /// The control socket's, when it listens.
        package var control: Control?
        /// `cgroup` or `process_groups`: how the workers are contained.
        package var containment: String
        package var sharedRings: Bool

        package init(files: Files, requestBytes: Int, control: Control?, containment: String, sharedRings: Bool) {
            self.files = files
            self.requestBytes = requestBytes
            self.control = control
            self.containment = containment
            self.sharedRings = sharedRings
        }

        enum CodingKeys: String, CodingKey {
            case files, requestBytes = "request_bytes", control, containment, sharedRings = "shared_rings"
        }
    }

    /// Open files: the limits and how many are open.
    package struct Files: Encodable, Sendable {
        package var soft: Int
        package var hard: Int
        package var open: Int

        package init(soft: Int, hard: Int, open: Int) {
            self.soft = soft
            self.hard = hard
            self.open = open
        }
    }

    package struct Control: Encodable, Sendable {
        package var maxConnections: Int
        package var idleTimeout: Double
        package var maxRequestBytes: Int
        package var maxAnswerBytes: Int
        package var openConnections: Int

        package init(maxConnections: Int, idleTimeout: Double, maxRequestBytes: Int, maxAnswerBytes: Int, openConnections: Int) {
            self.maxConnections = maxConnections
            self.idleTimeout = idleTimeout
            self.maxRequestBytes = maxRequestBytes
            self.maxAnswerBytes = maxAnswerBytes
            self.openConnections = openConnections
        }

        enum CodingKeys: String, CodingKey {
            case maxConnections = "max_connections", idleTimeout = "idle_timeout", maxRequestBytes = "max_request_bytes"
            case maxAnswerBytes = "max_answer_bytes", openConnections = "open_connections"
        }
    }

    package static let name = "diagnostics"
    package static let summary = "Versions, paths (settings, run folder, socket, log, store), the store's figures, the fork server, outputs, task notifications and limits."
    package static let routes: [CommandRoute] = [.get("/api/diagnostics")]
    package static let mutating = false
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "versions": ["type": "object"], "agent": ["type": "object"], "paths": ["type": "object"],
        "store": ["type": "object"], "fork_server": ["type": "object"], "outputs": ["type": "array"], "limits": ["type": "object"],
        "notifications": NotificationStatistics.schema, "assignment": CommandCatalog.assignmentStatisticsSchema,
    ], required: ["ok", "versions", "agent", "paths", "store", "fork_server", "outputs", "limits"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        var paths = Paths(settings: "/etc/agent/agent.json", worker: "/usr/libexec/agent-worker")
        paths.store = "/var/lib/agent/agent.sqlite"
        return [([:], Answer(versions: Versions(agentRuntime: "1.0", moduleABI: 3, kernel: "Linux 6.8.0 x86_64"),
                             agent: Agent(pid: 4200, uptime: 12.5, processes: 3, disabled: 0, workers: 3, stopping: false), paths: paths,
                             store: ["path": "/var/lib/agent/agent.sqlite"], forkServer: ["running": true], outputs: [],
                             limits: Limits(files: Files(soft: 1024, hard: 4096, open: 31), requestBytes: 1_048_576, control: nil,
                                            containment: "process_groups", sharedRings: true)))]
    }

    package static func run(_ request: NoFields, on host: any SupervisionCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<Answer, CommandError>) -> Void) {
        respond(.success(host.diagnostics()))
    }
}
