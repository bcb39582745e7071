import AgentBase
import ArgumentParser
import Foundation
import JSONSchema

/// What every command with subcommands does before ArgumentParser sees its arguments.
public enum CommandEntry {
    /// The arguments after `-C DIR` options placed before the subcommand (the folder is
    /// changed to at once). An unknown subcommand exits with status 64 and names the closest
    /// known one.
    public static func arguments(for command: any ParsableCommand.Type,
                                 _ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> [String] {
        // Before any line is printed, this one's included (the options' own validation comes later).
        if arguments.prefix(while: { $0 != "--" }).contains("--no-color") { TerminalStyle.disableColors() }
        let rest = CommandDirectory.takeLeadingOptions(arguments)
        // `help` is ArgumentParser's own (`agent-control help status`).
        let names = command.configuration.subcommands.map { $0._commandName }
        if let word = rest.first, !word.hasPrefix("-"), !names.contains(word), word != "help" {
            let hint = hint(for: word, among: names)
            TerminalStyle.printError("""
                '\(word)' is not a command of \(command._commandName)\(hint)
                commands: \(names.joined(separator: ", ")); see '\(command._commandName) --help'
                """)
            exit(ExitCode.validationFailure.rawValue)
        }
        return rest
    }

    /// `; did you mean 'x'?` when a candidate is close to `word`, else an empty string.
    public static func hint(for word: String, among candidates: [String]) -> String {
        Suggestions.closest(to: word, among: candidates).map { "; did you mean '\($0)'?" } ?? ""
    }
}
