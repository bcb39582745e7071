import AgentRuntime
import ArgumentParser
import Logging

@main
struct AgentControl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent-control",
        abstract: "Run and manage an AgentRuntime agent.",
        discussion: """
        An agent is a folder with settings.json and modules/. `agent-control console` runs it in \
        the foreground: every enabled process in its own worker process, events routed from \
        datasources to monitors, dead workers restarted.
        """,
        subcommands: [Console.self, Validate.self]
    )
}

struct Console: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the agent in the foreground until Ctrl-C or SIGTERM.",
        discussion: """
        Reads the settings, builds the agent's stale Swift modules (unless --no-build), loads every \
        enabled module in a worker to learn its process types, checks every process, then starts \
        one worker per enabled process. Events and messages are printed on stdout; the log \
        (including the workers' output, tagged with the process name) goes to stderr. \
        Ctrl-C or SIGTERM stops every worker gracefully and exits 0.

        Exit status: 0 after a clean stop, 2 if the settings or a module are invalid (nothing is \
        started), 1 on other failures.
        """
    )

    @Option(name: .long, help: "The settings file.")
    var settings: String = "settings.json"

    @Flag(name: .long, help: "Do not build the agent's stale Swift modules; use the libraries as they are.")
    var noBuild = false

    @Option(name: [.customShort("c"), .long], help: "Build configuration of the agent's modules: debug or release (default: the one agent-control was built in).")
    var configuration: String?

    @Flag(name: .long, help: "Print events and messages as JSON lines.")
    var json = false

    @Flag(name: .long, help: "Print messages only, not every event.")
    var quiet = false

    @Flag(name: .long, help: "Start the valid processes even if some are invalid (the invalid ones are reported).")
    var skipInvalid = false

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    func validate() throws {
        if let configuration, !["debug", "release"].contains(configuration) {
            throw ValidationError("--configuration must be debug or release, not \"\(configuration)\"")
        }
        if Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    func run() throws {
        var options = AgentLauncher.Options()
        options.settingsPath = settings
        options.build = !noBuild
        options.configuration = configuration
        options.json = json
        options.showEvents = !quiet
        options.skipInvalid = skipInvalid
        options.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let code = AgentLauncher(options: options).runConsole()
        if code != 0 { throw ExitCode(code) }
    }
}
