import AgentRuntime
import ArgumentParser

/// Options shared by the commands that read an agent's settings.
struct SettingsOptions: ParsableArguments {
    @Option(name: .long, help: "The settings file (its folder is the agent's folder).")
    var settings: String = "settings.json"

    @Flag(name: .long, help: "Do not build the agent's stale Swift modules; use the libraries as they are.")
    var noBuild = false

    @Option(name: [.customShort("c"), .long], help: "Build configuration of the agent's modules: debug or release (default: the one this program was built in).")
    var configuration: String?

    func validate() throws {
        if let configuration, !["debug", "release"].contains(configuration) {
            throw ValidationError("--configuration must be debug or release, not \"\(configuration)\"")
        }
    }

    var launcherOptions: AgentLauncher.Options {
        var options = AgentLauncher.Options()
        options.settingsPath = settings
        options.build = !noBuild
        options.configuration = configuration
        return options
    }
}

struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate the settings against the host's schema and every process type's schema.",
        discussion: """
        Loads every enabled module in a worker to learn its process types and settings schemas, \
        then checks every process (enabled or not). Prints a report per module and per process \
        with every error (file, JSON pointer, what was expected, what was found). Exit status: \
        0 when valid, 2 when not, 1 when the check itself could not run.
        """
    )

    @OptionGroup var options: SettingsOptions

    @Flag(name: .long, help: "Print the report as JSON.")
    var json = false

    func run() throws {
        var launcher = options.launcherOptions
        launcher.json = json
        launcher.logLevel = .warning
        let code = AgentLauncher(options: launcher).validate()
        if code != 0 { throw ExitCode(code) }
    }
}
