import AgentCLI
import AgentVersion
import ArgumentParser

@main
struct ValidateSettings: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate-settings",
        abstract: "Validate an agent's settings.json (the same check as `agent-control validate`).",
        discussion: ValidateOptions.discussion + "\n\n" + ValidateOptions.exitStatus,
        version: AgentVersion.line(for: "validate-settings"))

    @OptionGroup var options: ValidateOptions

    func run() throws { try options.run() }
}
