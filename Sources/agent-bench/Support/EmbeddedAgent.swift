import AgentBase
import AgentCommands
import AgentCore
import AgentHTTP
import AgentRuntime
import AgentStore
import AgentSupervision
import AgentWork
import Foundation
import JSONSchema
import Logging

/// An agent supervised inside the bench process, on the calling (main) thread: the settings
/// go through the same preparation as `agent-control console` (locate, describe through a
/// worker, validate), then the bench drives the supervisor's loop with `run(until:timeout:)`.
/// Messages from processes are read back from the console output (JSON lines on a pipe).
final class EmbeddedAgent {
    let supervisor: Supervisor
    let settingsFile: String
    private let consoleRead: Int32
    private let consoleWrite: Int32
    private var partialLine: [UInt8] = []
    private var readBuffer = [UInt8](repeating: 0, count: 16 << 10)
    /// Messages sent by processes, in order: (source, text).
    private(set) var messages: [(source: String, text: String)] = []
    /// The SQLite store the supervisor appends every event to, when the settings have it on.
    let store: AgentStore?
    /// Threads of the bench process that the store started (its writer).
    private(set) var storeThreads: [Int32] = []
    /// The HTTP server, started as agent-control starts it when the settings have `"http"`.
    private(set) var http: HTTPFront?

    /// The store is opened as `agent-control` opens it (`AgentLauncher.openStore`): when the
    /// settings' `store.enabled` is true (the default), at the path they give, with their
    /// settings, and handed to the supervisor; one that cannot be opened fails the run, as it
    /// stops agent-control's start.
    ///
    /// Workers are forked by a fork server, as agent-control does, unless `forkServer` is
    /// false (then posix_spawn of agent-worker, as with `AGENT_FORK_SERVER=0`).
    /// `fleet`: the fleet's database, as `"fleet"` in an agent's settings gives it (figure 13's
    /// routing cost of fleet mode).
    /// `work`: the work layer (tasks, schedules, workflows) set up from the settings, as
    /// agent-control sets it up. `legacyStore`: the store laid out as schema v8 left it
    /// (``LegacyStoreLayout``: figure 5's before). `workerEnvironment`: variables added to the
    /// workers' (and the fork server's) environment.
    init(environment: BenchEnvironment, name: String, settings: String, logFD: Int32, forkServer: Bool = true, sharedRings: Bool = true,
         fleet: (any FleetBackend)? = nil, work: Bool = false, legacyStore: Bool = false, workerEnvironment: [String: String] = [:]) throws {
        settingsFile = try environment.writeAgent(name, settings: settings)
        var options = AgentLauncher.Options()
        options.settingsPath = settingsFile
        options.build = false
        options.configuration = "release"
        let logger = Logger(label: "bench") { AgentLogHandler(label: $0, fd: logFD, level: .info) }
        let prepared: AgentLauncher.Prepared
        do {
            prepared = try AgentLauncher(options: options).prepare(logger: logger)
        } catch {
            throw BenchError("cannot prepare \(settingsFile): \(error.description)")
        }
        guard prepared.report.isValid else {
            throw BenchError("invalid settings \(settingsFile): " + prepared.report.blockingIssues.map { "\($0)" }.joined(separator: "; "))
        }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
        consoleRead = fds[0]
        consoleWrite = fds[1]
        _ = fcntl(consoleRead, F_SETFL, fcntl(consoleRead, F_GETFL) | O_NONBLOCK)
        _ = fcntl(consoleRead, F_SETFD, FD_CLOEXEC)
        _ = fcntl(consoleWrite, F_SETFD, FD_CLOEXEC)
        // No cgroup of an agent the bench may run under (from a command task, say): its fork
        // server would remove that agent's cgroups at the bench's end.
        let inherited = ProcessInfo.processInfo.environment.merging([WorkerCgroup.environmentKey: "", WorkerCgroup.v1FoldersKey: ""]) { _, new in new }
        let supervisor = Supervisor.make(
            configuration: SupervisorConfiguration(
                workerPath: prepared.workerPath,
                environment: inherited.merging(workerEnvironment) { _, new in new }
                    .merging(sharedRings ? [:] : ["AGENT_SHARED_RINGS": "0"]) { _, new in new }),
            processes: prepared.report.planned,
            console: ConsoleOutput(json: true, showEvents: false, fd: consoleWrite), logger: logger)
        self.supervisor = supervisor
        if forkServer {
            switch ForkServer.start(workerPath: prepared.workerPath,
                                    environment: inherited.merging(workerEnvironment) { _, new in new }) {
            case .success(let server): supervisor.inbox.isolated { supervisor.useForkServer(server) }
            case .failure(let error): throw BenchError("cannot start the fork server: \(error)")
            }
        }
        if prepared.settings.store.enabled {
            let settings = prepared.settings.store
            let path = settings.databasePath(agentDirectory: prepared.settings.agentDirectory)
            do {
                if legacyStore { try LegacyStoreLayout.create(path: path) }
                (store, storeThreads) = try ProcFiles.threadsStarted { try AgentStore(path: path, settings: settings, logger: logger) }
                if legacyStore { try LegacyStoreLayout.restoreTimeIndex(path: path) }
            } catch {
                throw BenchError("cannot open the store at \(path): \(error)")
            }
        } else {
            store = nil
        }
        let attached = self.store
        let commands = supervisor.inbox.isolated {
            supervisor.attach(store: attached, fleet: fleet)
            if work {
                supervisor.work.setUp(prepared.report.workDefinitions, agentDirectory: prepared.settings.agentDirectory,
                                      notifications: nil, containment: nil)
            }
            return supervisor.makeCommandCenter(storePath: attached?.path)
        }
        if let settings = prepared.settings.http {
            let context = FrontContext(commands: commands, http: prepared.settings.http,
                                       logger: logger)
            let front = HTTPFront(context: context, settings: settings)
            do {
                try front.start()
            } catch {
                throw BenchError("cannot start the HTTP server: \(error)")
            }
            http = front
        }
    }

    deinit {
        http?.stop()
        // Only after a failed run: workers the supervisor did not stop are killed and reaped.
        for info in supervisor.snapshot where info.pid > 0 {
            kill(info.pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(info.pid, &status, 0)
        }
        let supervisor = supervisor
        supervisor.inbox.isolated { supervisor.forkServer?.shutDown() }
        store?.close()
        close(consoleRead)
        close(consoleWrite)
    }

    func info(_ name: String) -> SupervisedProcessInfo? { supervisor.process(named: name) }

    /// Drives the loop until `condition` holds; returns whether it did before `timeout`.
    @discardableResult
    func run(timeout: Double, until condition: () -> Bool) -> Bool {
        var met = false
        supervisor.run(until: {
            met = condition()
            return met
        }, timeout: timeout)
        return met || condition()
    }

    /// Asks every worker to stop and drives the loop until none is left; returns the time it
    /// took in milliseconds, or nil on timeout.
    func stopAll(timeout: Double = 15) -> Double? {
        let start = Clock.now()
        let supervisor = supervisor
        supervisor.inbox.isolated { supervisor.stopAll() }
        let done = run(timeout: timeout) { supervisor.snapshot.allSatisfy { $0.pid == 0 } }
        return done ? (Clock.now() - start) * 1000 : nil
    }

    /// Reads what the console wrote since the last call and returns the new messages.
    @discardableResult
    func readMessages() -> [(source: String, text: String)] {
        var fresh: [(source: String, text: String)] = []
        while true {
            let n = readBuffer.withUnsafeMutableBytes { read(consoleRead, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            for byte in readBuffer[0..<n] {
                guard byte == 10 else {
                    partialLine.append(byte)
                    continue
                }
                if let line = try? JSONValue.parse(partialLine), line["kind"]?.stringValue == "message",
                   let source = line["source"]?.stringValue, let text = line["text"]?.stringValue {
                    fresh.append((source, text))
                }
                partialLine.removeAll(keepingCapacity: true)
            }
        }
        messages += fresh
        return fresh
    }
}
