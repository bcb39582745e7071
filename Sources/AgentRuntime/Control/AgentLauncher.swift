import Foundation
import Logging

/// What `agent-control console` does, as a library so that tests and tools call the same code:
/// read the settings, find and build the modules, learn their manifests, check every process
/// against them, then supervise.
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
        public var logLevel: Logger.Level = .info
        public init() {}
    }

    /// Exit codes of agent-control.
    public enum ExitCode {
        public static let success: Int32 = 0
        public static let failure: Int32 = 1
        /// The settings or a module are invalid; nothing was started.
        public static let invalidConfiguration: Int32 = 2
    }

    public var options: Options
    public init(options: Options) { self.options = options }

    /// The folder of the running agent-control (where agent-worker and the runtime's own
    /// module libraries are).
    public static var runtimeDirectory: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().path
    }

    /// Runs in the foreground until SIGINT/SIGTERM. Returns the exit code.
    public func runConsole() -> Int32 {
        let logger = Logger(label: "agent") { AgentLogHandler(label: $0, fd: 2, level: options.logLevel) }
        let settings: AgentSettings
        do {
            settings = try AgentSettings.load(file: options.settingsPath)
        } catch {
            Self.printError("\(error)")
            return ExitCode.invalidConfiguration
        }
        let runtime = Self.runtimeDirectory
        let configuration = options.configuration ?? Self.configuration(of: runtime, agentDirectory: settings.agentDirectory)
        let environment = ProcessInfo.processInfo.environment
        let locator = ModuleLocator(
            agentDirectory: settings.agentDirectory, configuration: configuration,
            searchPath: (environment["AGENT_MODULE_PATH"] ?? "").split(separator: ":").map(String.init),
            runtimeDirectory: runtime)
        let workerPath = environment["AGENT_WORKER_PATH"] ?? runtime + "/agent-worker"
        guard access(workerPath, X_OK) == 0 else {
            Self.printError("cannot find the worker executable at \(workerPath); build it with `swift build` (or set AGENT_WORKER_PATH)")
            return ExitCode.failure
        }

        let supervisor: Supervisor
        do {
            let modules = try locator.locate(settings.enabledModules)
            if options.build {
                try locator.buildStale(modules) { logger.info("\($0)") }
            }
            let manifests = try ModuleDescriber(workerPath: workerPath).describe(modules)
            var supervisorConfiguration = SupervisorConfiguration(workerPath: workerPath, environment: environment)
            supervisorConfiguration.stopTimeout = 5
            supervisor = try Supervisor(
                configuration: supervisorConfiguration, settings: settings, modules: modules, manifests: manifests,
                console: ConsoleOutput(json: options.json, showEvents: options.showEvents), logger: logger)
            logger.info("agent in \(settings.agentDirectory): modules \(modules.map(\.name).joined(separator: ", ")); \(supervisor.snapshot.count) process(es); Ctrl-C stops")
        } catch let error as ModuleLoadError {
            Self.printError("\(error)")
            return ExitCode.invalidConfiguration
        } catch {
            Self.printError("\(error)")
            return ExitCode.invalidConfiguration
        }
        supervisor.run()
        return ExitCode.success
    }

    /// `release` when agent-control runs from the agent's own `.build/…/release`, else `debug`.
    static func configuration(of runtimeDirectory: String, agentDirectory: String) -> String {
        let last = URL(fileURLWithPath: runtimeDirectory).lastPathComponent
        return runtimeDirectory.hasPrefix(agentDirectory + "/.build/") && last == "release" ? "release" : "debug"
    }

    static func printError(_ text: String) {
        FileHandle.standardError.write(Data("error: \(text)\n".utf8))
    }
}
