import AgentBase
import AgentRuntime
import ArgumentParser
import Foundation

/// Which agent a command is about: `--settings FILE`, else the `settings.json` of the current
/// folder or of the nearest parent that has one (as git finds its repository); `-C DIR` runs
/// the command as if started in DIR; `--no-color` turns colours off.
public struct SettingsOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The settings file; its folder is the agent's folder (default: settings.json here or in the nearest parent folder that has one).",
        valueName: "file"))
    public var settings: String?

    @Option(name: .customShort("C"), help: ArgumentHelp(
        "Run as if started in DIR (as git -C): relative paths and the search for settings.json start there.",
        valueName: "dir"))
    public var directory: String?

    // Here because every command that prints for a person takes these options.
    @Flag(name: .long, help: "No colours (also with NO_COLOR set; never when the output is not a terminal).")
    public var noColor = false

    public init() {}

    public func validate() throws {
        if noColor { TerminalStyle.disableColors() }
    }

    /// Changes to `-C`'s folder, then finds the settings file: `--settings` as given, else
    /// the nearest `settings.json`. When there is none, prints why and exits with status 2,
    /// unless `required` is false (then nil).
    public func resolve(required: Bool = true) throws -> String? {
        try CommandDirectory.change(to: directory)
        if let settings {
            // A folder would be taken for the settings' folder's parent: `stop` said "not running"
            // of a running agent, `start` made .agent in the parent.
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: settings, isDirectory: &isFolder), isFolder.boolValue {
                throw CommandFailure.report("\(settings): /: expected a settings file (a regular file of JSON), found a folder; pass its settings file (--settings \((settings as NSString).appendingPathComponent(SettingsDiscovery.fileName))) or run in it (-C \(settings))",
                                            exitCode: AgentLauncher.ExitCode.invalidConfiguration)
            }
            return settings
        }
        let here = FileManager.default.currentDirectoryPath
        if let found = SettingsDiscovery.find(from: here) { return found }
        guard required else { return nil }
        throw CommandFailure.report(SettingsNotFoundError(directory: here).description, exitCode: AgentLauncher.ExitCode.invalidConfiguration)
    }
}

/// `-C DIR`: the working folder of a command.
public enum CommandDirectory {
    /// Changes the working folder to `directory` (relative to the current one); nil does nothing.
    public static func change(to directory: String?) throws {
        guard let directory else { return }
        guard FileManager.default.changeCurrentDirectoryPath(directory) else {
            let reason = String(cString: strerror(errno))
            throw CommandFailure.report("-C \(directory): cannot change to that folder: \(reason)", exitCode: ExitCode.validationFailure.rawValue)
        }
    }

    /// Takes git-style `-C DIR` options placed before the subcommand (`agent-control -C DIR
    /// status`), changing to each in turn; returns the remaining arguments.
    public static func takeLeadingOptions(_ arguments: [String]) -> [String] {
        var rest = arguments[...]
        while rest.count >= 2, rest.first == "-C" {
            let directory = rest.dropFirst().first!
            do {
                try change(to: directory)
            } catch {
                CommandFailure.exit(error)
            }
            rest = rest.dropFirst(2)
        }
        return Array(rest)
    }
}

/// How a command fails with a message of its own.
public enum CommandFailure {
    /// Prints `error: TEXT` on stderr and returns the exit code to throw (ArgumentParser exits
    /// with it without printing anything more).
    public static func report(_ text: String, exitCode: Int32 = AgentLauncher.ExitCode.failure) -> ExitCode {
        TerminalStyle.printError(text)
        return ExitCode(exitCode)
    }

    /// Exits with the code of an error thrown by ``report(_:exitCode:)``.
    public static func exit(_ error: any Error) -> Never {
        Foundation.exit((error as? ExitCode)?.rawValue ?? AgentLauncher.ExitCode.failure)
    }
}
