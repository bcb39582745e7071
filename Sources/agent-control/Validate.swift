import AgentRuntime
import ArgumentParser

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
        try finish(AgentLauncher(options: options).validate())
    }
}
