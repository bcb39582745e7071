import AgentCLI
import AgentRuntime
import AgentScaffolding
import ArgumentParser
import Foundation

struct Unit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unit",
        abstract: "Print a systemd unit that runs the agent as a service (Type=notify, watchdog, hardened).",
        discussion: """
        The unit runs `agent-control console` on the agent's settings as a dedicated user, with \
        Type=notify (the agent says when every process has started, when it reloads and stops, \
        its status, and pings the watchdog from its loop), ExecReload sending SIGHUP, \
        Restart=on-failure (not after exit status 2: invalid settings), KillMode=mixed (the \
        agent stops its own workers), Delegate=yes (the workers' cgroup) and ProtectSystem=strict \
        with the agent's folder writable. The agent is the one the options name (--agent-dir, \
        else --settings, -C or the nearest settings.json). Save it as the file named in its \
        header, e.g. `agent-control unit > /etc/systemd/system/agentruntime-NAME.service`. \
        Warnings go to stderr: an agent folder under /tmp or /var/tmp (the unit's PrivateTmp=yes \
        hides it) and a debug build of agent-control (build release for a service).
        """)

    @OptionGroup var agent: SettingsOptions

    @Option(name: .long, help: ArgumentHelp("The agent's folder (default: the folder of its settings file).", valueName: "dir"))
    var agentDir: String?

    @Option(name: .long, help: "The agent's name in the unit's name, agentruntime-NAME.service (default: its folder's name).")
    var name: String?

    @Option(name: .long, help: "The user the agent runs as.")
    var user = "agentruntime"

    @Option(name: .long, help: "Its group (default: the user's name).")
    var group: String?

    @Option(name: .long, help: ArgumentHelp("The folder of agent-control and agent-worker (default: this agent-control's; /usr/bin with --template).", valueName: "dir"))
    var binaries: String?

    @Flag(name: .long, help: "Print the template unit agentruntime@.service instead: agentruntime@NAME runs the agent in /var/lib/agentruntime/NAME (as a package installs it).")
    var template = false

    @Option(name: .long, help: "WatchdogSec: seconds without a ping from the agent's loop before systemd restarts it (0: no watchdog).")
    var watchdog = 30

    @Option(name: .long, help: "TimeoutStopSec: seconds the agent may take to stop its workers (more than the longest stop_timeout).")
    var stopTimeout = 120

    func run() throws {
        var unit = try template ? ServiceUnit.template(binaries: binaries.map(Self.absolute) ?? "/usr/bin") : agentUnit()
        unit.user = user
        unit.group = group
        unit.watchdogSeconds = watchdog
        unit.stopTimeoutSeconds = stopTimeout
        let problems = unit.problems
        guard problems.isEmpty else {
            throw CommandFailure.report(problems.joined(separator: "\n"), exitCode: ExitCode.validationFailure.rawValue)
        }
        for warning in unit.warnings { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
        print(unit.text, terminator: "")
    }

    static func absolute(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }

    /// The unit of the agent the options name.
    func agentUnit() throws -> ServiceUnit {
        let directory: String
        if let agentDir {
            try CommandDirectory.change(to: agent.directory)
            directory = Self.absolute(agentDir)
        } else {
            let settings = try agent.resolve() ?? SettingsDiscovery.fileName
            directory = URL(fileURLWithPath: settings).standardizedFileURL.deletingLastPathComponent().path
        }
        return ServiceUnit(agentName: name ?? URL(fileURLWithPath: directory).lastPathComponent, agentDirectory: directory,
                           binaries: binaries.map(Self.absolute) ?? AgentLauncher.runtimeDirectory)
    }
}
