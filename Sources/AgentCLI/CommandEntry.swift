import AgentBase
import AgentCore
import ArgumentParser
import Foundation
import JSONSchema

/// What every command with subcommands does around ArgumentParser: `-C DIR` before the
/// command, the closest command for a misspelled one at every level, and the exit status
/// table at the end of every `--help`.
public enum CommandEntry {
    /// Parses `arguments` (see ``arguments(for:_:)``), runs the command, and exits as
    /// ArgumentParser would, except that a help ends with ``ExitStatus/help``.
    public static func main(_ command: any ParsableCommand.Type,
                            _ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Never {
        let rest = Self.arguments(for: command, arguments)
        let parsed: any ParsableCommand
        do {
            parsed = try command.parseAsRoot(rest)
        } catch {
            fail(command, error)
        }
        run(parsed, root: command)
    }

    /// Runs a parsed command of `root`'s tree and exits as ``main(_:_:)`` does.
    public static func run(_ parsed: any ParsableCommand, root command: any ParsableCommand.Type) -> Never {
        var parsed = parsed
        do {
            try parsed.run()
            exit(0)
        } catch let error as ArgumentParser.ValidationError {
            // Found by the command's run (an `--input @FILE` that cannot be read): its usage,
            // not the root's, as when its own validation finds it.
            let usage = command.usageString(for: type(of: parsed))
            FileHandle.standardError.write(Data(TerminalText.shown("Error: \(error.message)\nUsage: \(usage)\n").utf8))
            exit(ExitCode.validationFailure.rawValue)
        } catch {
            fail(command, error)
        }
    }

    /// Exits with `error`'s status, its message on stderr (on stdout for a help, which ends
    /// with the exit status table).
    private static func fail(_ command: any ParsableCommand.Type, _ error: any Error) -> Never {
        let code = command.exitCode(for: error).rawValue
        var message = command.fullMessage(for: error)
        // A help (`--help`, `-h`, `help COMMAND`; not --version or --experimental-dump-help):
        // the table that holds for every command.
        if code == 0, message.hasPrefix("OVERVIEW:") || message.hasPrefix("USAGE:") { message += "\n\n" + ExitStatus.help }
        if !message.isEmpty {
            if code == 0 {
                print(message)
            } else {
                // A usage error repeats the value it refuses: its controls shown, not obeyed.
                FileHandle.standardError.write(Data((TerminalText.shown(message) + "\n").utf8))
            }
        }
        exit(code)
    }

    /// `subcommand`'s own arguments parsed alone, when `arguments` starts with its name: nil
    /// when they ask for anything but a run (a help, a completion script, `--no-color`, which
    /// the whole tree handles) or do not parse (the whole tree's parse then says why, as for
    /// every command). ArgumentParser builds the tree of the command it parses: the whole
    /// tree of a command with many subcommands is milliseconds of a start that does not need it.
    public static func parseAlone<Subcommand: ParsableCommand>(_ subcommand: Subcommand.Type,
                                                               _ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Subcommand? {
        guard arguments.first == subcommand._commandName else { return nil }
        let own = arguments.dropFirst()
        let words = own.prefix { $0 != "--" }
        guard !words.contains(where: { ["-h", "--help", "help", "--no-color", "--version"].contains($0) || $0.hasPrefix("--generate-completion") || $0.hasPrefix("--experimental") })
        else { return nil }
        return try? subcommand.parseAsRoot(Array(own)) as? Subcommand
    }

    /// The arguments after `-C DIR` options placed before the subcommand (the folder is
    /// changed to at once). A word that names no subcommand where one is expected (`stauts`,
    /// `task rnu`, `help nosuch`) exits with status 64 and names the closest known one.
    public static func arguments(for command: any ParsableCommand.Type,
                                 _ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> [String] {
        // Before any line is printed, this one's included (the options' own validation comes later).
        if arguments.prefix(while: { $0 != "--" }).contains("--no-color") { TerminalStyle.disableColors() }
        let rest = CommandDirectory.takeLeadingOptions(arguments)
        // `help` is ArgumentParser's own (`agent-control help task run`): the words after it
        // must name commands too.
        var words = rest.first == "help" ? rest.dropFirst() : rest[...]
        var current = command
        var path = [command._commandName]
        while let word = words.first, !word.hasPrefix("-") {
            let names = commandNames(of: current)
            // A command without subcommands takes its own arguments from here.
            guard !names.isEmpty else { break }
            guard let next = current.configuration.subcommands.first(where: { $0._commandName == word || $0.configuration.aliases.contains(word) }) else {
                // A command with a default subcommand gives it the word (`chat "hello"`).
                if current.configuration.defaultSubcommand != nil { break }
                let name = path.joined(separator: " ")
                TerminalStyle.printError("""
                    '\(word)' is not a command of \(name)\(hint(for: word, among: names))
                    commands: \(names.joined(separator: ", ")); see '\(name) --help'
                    """)
                exit(ExitCode.validationFailure.rawValue)
            }
            current = next
            path.append(word)
            words = words.dropFirst()
        }
        return rest
    }

    /// The names a command takes after `command` (its subcommands'), the one list the
    /// misspelling hints are made from at every level.
    public static func commandNames(of command: any ParsableCommand.Type) -> [String] {
        command.configuration.subcommands.map { $0._commandName }
    }

    /// `; did you mean 'x'?` when a candidate is close to `word`, else an empty string.
    public static func hint(for word: String, among candidates: [String]) -> String {
        Suggestions.closest(to: word, among: candidates).map { "; did you mean '\($0)'?" } ?? ""
    }
}
