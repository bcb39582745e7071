import AgentRuntime
import ArgumentParser

@main
struct ValidateSettings: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate-settings",
        abstract: "Validate an agent's settings.json (the same check as `agent-control validate`).",
        discussion: """
        Loads every enabled module in a worker to learn its process types and settings schemas, \
        then checks the settings in two layers: the host's schema (top-level keys, host-level \
        process keys such as type, enabled, restart) and each process's own settings against its \
        type's schema. Prints a report per module and per process with every error. Exit status: \
        0 when valid, 2 when not, 1 when the check itself could not run.
        """
    )

    @Option(name: .long, help: "The settings file (its folder is the agent's folder).")
    var settings: String = "settings.json"

    @Flag(name: .long, help: "Do not build the agent's stale Swift modules; use the libraries as they are.")
    var noBuild = false

    @Option(name: [.customShort("c"), .long], help: "Build configuration of the agent's modules: debug or release.")
    var configuration: String?

    @Flag(name: .long, help: "Print the report as JSON.")
    var json = false

    func validate() throws {
        if let configuration, !["debug", "release"].contains(configuration) {
            throw ValidationError("--configuration must be debug or release, not \"\(configuration)\"")
        }
    }

    func run() throws {
        var options = AgentLauncher.Options()
        options.settingsPath = settings
        options.build = !noBuild
        options.configuration = configuration
        options.json = json
        options.logLevel = .warning
        let code = AgentLauncher(options: options).validate()
        if code != 0 { throw ExitCode(code) }
    }
}
