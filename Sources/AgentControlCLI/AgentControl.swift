import AgentCLI
#if Fleet
import AgentFleet
#endif
import AgentHTTP
import AgentRuntime
import AgentVersion
import ArgumentParser
import Foundation
import Logging

/// `agent-control`: the root of the command tree; the executable's `main.swift` calls `main()`.
public struct AgentControl: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "agent-control",
        abstract: "Run and manage an AgentRuntime agent.",
        discussion: """
        An agent is a folder with settings.json and modules/. `console` runs it in the foreground; \
        `start` runs it detached (pidfile, log file); `status`, `reload`, `process`, `logs`, `stop` \
        and `restart` talk to the running agent over its control socket (.agent/run/control.sock, \
        mode 0600). AGENT_RUN_DIR, AGENT_PIDFILE and AGENT_LOG_FILE override the default paths.

        The agent is found the way git finds its repository: --settings FILE, else settings.json \
        in the current folder or the nearest parent folder that has one; -C DIR (before or after \
        the command) runs as if started in DIR.

        \(ExitStatus.sentence)
        """,
        version: AgentVersion.line(for: "agent-control"),
        subcommands: [Console.self, Start.self, Stop.self, Restart.self, Status.self, Reload.self, ProcessCommand.self, Logs.self, Chat.self, Events.self, Publish.self, History.self, Validate.self,
                      SettingsCommand.self, Modules.self, Diagnostics.self, HashPassword.self, TaskCommand.self, ExecutorCommand.self, ScheduleCommand.self, MemoryCommand.self, WorkflowCommand.self, FleetCommand.self, Unit.self, Docs.self,
                      Mcp.self]
    )

    public init() {}

    /// `-C DIR` before the command and the hint for a misspelled command come first; every
    /// help ends with the exit status table.
    public static func main() {
        // `console` (also what `start` detaches) compiles the settings' schema beside the
        // argument parsing, while the second core is idle (see StartWarmUp). A word "console"
        // elsewhere on the line only costs that compile on the other core.
        if CommandLine.arguments.dropFirst().contains("console") { StartWarmUp.begin() }
        // `console` (and the `start` it runs detached) parsed without the whole command tree.
        if let console = CommandEntry.parseAlone(Console.self) { CommandEntry.run(console, root: Self.self) }
        CommandEntry.main(Self.self)
    }
}

/// Where the agent's settings, pidfile, socket and log are.
struct LocationOptions: ParsableArguments {
    @OptionGroup var agent: SettingsOptions

    @Option(name: .long, help: "Folder of the pidfile and the control socket (default: .agent/run in the agent's folder; env AGENT_RUN_DIR).")
    var runDir: String?

    @Option(name: .long, help: "The pidfile (default: agent.pid in the run folder; env AGENT_PIDFILE).")
    var pidfile: String?

    @Option(name: .long, help: "The log file of a detached agent (default: .agent/log/agent.log; env AGENT_LOG_FILE).")
    var logFile: String?

    /// The launcher's options for the agent these options name. A command that only talks to
    /// a running agent (`needsSettings: false`) also works without a settings file when its run
    /// folder or pidfile is given.
    func options(needsSettings: Bool = true) throws -> AgentLauncher.Options {
        let environment = ProcessInfo.processInfo.environment
        let runFolderGiven = runDir != nil || pidfile != nil || environment["AGENT_RUN_DIR"] != nil || environment["AGENT_PIDFILE"] != nil
        var options = AgentLauncher.Options()
        options.settingsPath = try agent.resolve(required: needsSettings || !runFolderGiven) ?? SettingsDiscovery.fileName
        // A command that only talks to the agent finds it by its settings' folder: a wrong
        // --settings would otherwise answer "not running" about an agent that does not exist.
        // (Commands that read the settings say so themselves.)
        if !needsSettings, !runFolderGiven, agent.settings != nil, !FileManager.default.fileExists(atPath: options.settingsPath) {
            throw CommandFailure.report("\(URL(fileURLWithPath: options.settingsPath).standardizedFileURL.path): no such settings file; pass the agent's settings.json with --settings, or run in its folder (or -C it)",
                                        exitCode: AgentLauncher.ExitCode.invalidConfiguration)
        }
        options.runDirectory = runDir
        options.pidfile = pidfile
        options.logFile = logFile
        return options
    }

    func daemon(needsSettings: Bool = false) throws -> AgentDaemon {
        AgentDaemon(launcher: AgentLauncher(options: try options(needsSettings: needsSettings)))
    }
}

/// How the agent runs: build, output, logging.
struct RunOptions: ParsableArguments {
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

    func apply(to options: inout AgentLauncher.Options) {
        options.build = !noBuild
        options.configuration = configuration
        options.json = json
        options.showEvents = !quiet
        options.skipInvalid = skipInvalid
        options.logLevel = Logger.Level(rawValue: logLevel) ?? .info
    }
}

extension ParsableCommand {
    func finish(_ code: Int32) throws {
        if code != 0 { throw ExitCode(code) }
    }
}

struct Console: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console",
        abstract: "Run the agent in the foreground until Ctrl-C, SIGTERM or `agent-control stop`.",
        discussion: """
        Reads the settings, builds the agent's stale Swift modules (unless --no-build), loads every \
        enabled module in a worker to learn its process types, validates every process, then starts \
        one worker per enabled process, forked by a fork server (agent-worker --fork-server; \
        AGENT_FORK_SERVER=0 starts each with posix_spawn instead; AGENT_FORK_SERVER_BIND_NOW=1 has \
        the server's loader bind every library's symbols at its start, so that each worker starts \
        with less CPU and memory and the first a little later), from a zygote per module library \
        that loaded the library once (agent-worker --zygote NAME; AGENT_ZYGOTES=0: each worker \
        loads it). Events reach each worker, and \
        leave it, through memory it shares with the supervisor (AGENT_SHARED_RINGS=0: through its \
        socket instead); a process waiting for events sleeps on that memory, and the supervisor's \
        delivery wakes it itself (AGENT_WORKER_EVENT_WAIT=0: through the worker's reader thread). The workers and everything they start live in a cgroup of the agent's own \
        where cgroup v2 is writable (AGENT_CGROUPS=0: their process groups are written down in the \
        run folder instead), so that what a killed agent left is killed at once or at its next start. \
        Each worker's malloc keeps at most two arenas, however many threads its module starts \
        (AGENT_WORKER_MALLOC_ARENAS=N sets another limit; 0 leaves glibc's own). \
        Each worker keeps an exit reaper (`agent-exit` in ps), which holds its memory after a crash \
        so that the restart need not wait for the kernel to free it (AGENT_WORKER_EXIT_REAPER=0: none). \
        Once every first start has settled, the agent unmaps the code pages that only the start \
        used, and each worker its own a second after it is ready (they stay in the page cache; \
        AGENT_RELEASE_START_PAGES=0 keeps them mapped). \
        Events and messages are printed on stdout; the log \
        (including the workers' output, tagged with the process name) goes to stderr. The agent \
        also listens on its control socket, so `agent-control status` works from another terminal. \
        SIGHUP reloads the settings. Ctrl-C or SIGTERM stops every worker gracefully and exits 0, \
        and so does the end of stdout: a pipe's reader that exits (`--json | head`), or the \
        terminal closed. A reader that stops reading never holds the agent: beyond 1 MiB \
        waiting, lines are dropped and a line says how many.
        """
    )

    @OptionGroup var location: LocationOptions
    @OptionGroup var how: RunOptions

    @Flag(name: .long, help: .hidden)
    var daemon = false

    func run() throws {
        var options = try location.options()
        how.apply(to: &options)
        options.daemon = daemon
        var launcher = AgentLauncher(options: options, fronts: [HTTPFront.factory])
        #if Fleet
        launcher.fleetConnector = PostgresFleetStore.connector
        #endif
        try finish(launcher.runConsole())
    }
}

/// What `start` and `restart` take beyond the run options.
struct DetachOptions: ParsableArguments {
    @Flag(name: .long, help: "Also write every event to the log file.")
    var events = false

    func options(_ location: LocationOptions, _ how: RunOptions) throws -> AgentLauncher.Options {
        var options = try location.options()
        how.apply(to: &options)
        options.showEvents = events && !how.quiet
        return options
    }
}

struct Start: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Start the agent detached, with a pidfile and a log file.",
        discussion: """
        Refuses to start a second agent on the same pidfile (a stale pidfile, left by an agent \
        that died, is replaced), and a second start while one is in progress. Returns once the \
        agent answers on its control socket; if it fails to start, prints its log and exits with \
        the agent's status (2: invalid settings or module). Events are not logged unless --events.
        """
    )

    @OptionGroup var location: LocationOptions
    @OptionGroup var how: RunOptions
    @OptionGroup var detach: DetachOptions

    func run() throws {
        try finish(AgentDaemon(launcher: AgentLauncher(options: detach.options(location, how))).start())
    }
}

struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Stop the running agent: every worker gracefully, then the supervisor.",
        discussion: """
        An agent that is not running is already stopped: `stop` says so and succeeds. The agent is \
        the one listening on the run folder's control socket, or the pidfile's when that process \
        holds the run folder; an agent stopped by SIGSTOP, or a pidfile held by another run \
        folder's process, is said and left alone (exit 1).
        """)

    @OptionGroup var location: LocationOptions

    @Option(name: .long, help: "Seconds to wait for the agent to exit.")
    var timeout: Double = 120

    func validate() throws {
        guard timeout.isFinite, timeout > 0 else { throw ValidationError("--timeout must be a number of seconds > 0; found \(timeout)") }
    }

    func run() throws {
        try finish(location.daemon().stop(timeout: timeout))
    }
}

struct Restart: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restart",
        abstract: "Stop the running agent (if any) and start it again, detached.",
        discussion: "Takes the options of `start`.")

    @OptionGroup var location: LocationOptions
    @OptionGroup var how: RunOptions
    @OptionGroup var detach: DetachOptions

    func run() throws {
        try finish(AgentDaemon(launcher: AgentLauncher(options: detach.options(location, how))).restart())
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the running agent's processes: state, pid, time in state, restarts, last exit, events.",
        discussion: """
        States: starting, running, backoff, stopping (also while a reload replaces the process and \
        its old worker stops), stopped, stopped (SIGSTOP) for a worker stopped by a signal, exited, \
        failed, and disabled for a process the settings list with "enabled": false. Nothing \
        listening on the control socket counts as not running (exit 3); an agent that is stopped \
        (SIGSTOP), does not answer in time, or refuses the request (e.g. at its limit of control \
        connections) as a failure (exit 1), saying which.
        """)

    @OptionGroup var location: LocationOptions

    @Flag(name: .long, help: "Print the status as JSON.")
    var json = false

    func run() throws {
        try finish(location.daemon().status(json: json))
    }
}

struct Reload: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload",
        abstract: "Re-read and validate the settings, then apply only the differences.",
        discussion: """
        Unchanged processes keep running with the same pid; changed ones restart; removed ones \
        stop; new ones start. Invalid settings are refused with every error (exit status 2) and \
        the running configuration stays. SIGHUP to the agent does the same. Modules are not \
        rebuilt by a reload: build them first.
        """)

    @OptionGroup var location: LocationOptions

    @Flag(name: .long, help: "Print the answer as JSON: what was kept, restarted, started and stopped, or the refusal with each error's file, pointer and message.")
    var json = false

    func run() throws {
        try finish(location.daemon().reload(json: json))
    }
}

struct ProcessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "process",
        abstract: "Start, stop or restart one process of the running agent.",
        discussion: """
        `stop` keeps the process down until `start`; `start` also brings back a process that \
        failed (e.g. after reaching its start limit) and resets its restart count window.
        """)

    @Argument(help: "start, stop or restart.")
    var action: String

    @Argument(help: "The process's name in settings.json.")
    var name: String

    @OptionGroup var location: LocationOptions

    func validate() throws {
        guard ["start", "stop", "restart"].contains(action) else {
            throw ValidationError("the action must be start, stop or restart, not \"\(action)\"\(CommandEntry.hint(for: action, among: ["start", "stop", "restart"]))")
        }
    }

    func run() throws {
        try finish(location.daemon().process(action, name: name))
    }
}
