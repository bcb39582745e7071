import AgentCLI
import ArgumentParser

struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Validate the settings against the host's schema and every process type's schema.",
        discussion: ValidateOptions.discussion)

    @OptionGroup var options: ValidateOptions

    func run() throws { try options.run() }
}
