import AgentRuntime
import ArgumentParser

/// The options and the run of settings validation, shared by `validate-settings` and
/// `agent-control validate`.
public struct ValidateOptions: ParsableArguments {
    @OptionGroup var agent: SettingsOptions

    @Flag(name: .long, help: "Do not build the agent's stale Swift modules; use the libraries as they are.")
    var noBuild = false

    @Option(name: [.customShort("c"), .long], help: "Build configuration of the agent's modules: debug or release.")
    var configuration: String?

    @Flag(name: .long, help: "Print the report as JSON.")
    var json = false

    public init() {}

    /// What the check does, for `agent-control validate` (whose exit statuses are agent-control's
    /// one table) and, with ``exitStatus``, for validate-settings.
    public static let discussion = """
        Loads every enabled module in a worker to learn its process types and settings schemas, \
        then checks the settings in two layers: the host's schema (top-level keys, host-level \
        process keys such as type, enabled, restart) and each process's own settings against its \
        type's schema. Prints a report per module and per process with every error (file, JSON \
        pointer, what was expected, what was found). Without --settings, the settings.json of the \
        current folder or of the nearest parent folder that has one is checked.
        """

    public static let exitStatus = """
        Exit status: 0 when valid, 2 when not (or when there is no settings file), 1 when the \
        check itself could not run, 64 for a usage error.
        """

    public func validate() throws {
        if let configuration, !["debug", "release"].contains(configuration) {
            throw ValidationError("--configuration must be debug or release, not \"\(configuration)\"")
        }
    }

    /// Validates and prints the report; throws the exit code when not valid.
    public func run() throws {
        var options = AgentLauncher.Options()
        options.settingsPath = try agent.resolve() ?? SettingsDiscovery.fileName
        options.build = !noBuild
        options.configuration = configuration
        options.json = json
        options.logLevel = .warning
        let code = AgentLauncher(options: options).validate()
        if code != 0 { throw ExitCode(code) }
    }
}
