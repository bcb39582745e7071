import AgentCLI
import AgentCommands
import ArgumentParser
import JSONSchema

/// `agent-control settings show|enable-module|…`: the running agent's settings, read and
/// changed through it (checked as `validate-settings` checks, written keeping the file's
/// formatting, applied by reload).
struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Show or change the running agent's settings (checked, written, reloaded).",
        discussion: """
        Each change goes through the running agent: the settings it would make are checked as \
        `validate-settings` checks them (both layers, every enabled module described); if valid, \
        settings.json is written atomically, keeping its formatting and key order everywhere else, \
        and applied as `agent-control reload` applies it (the answer says which processes were \
        kept, restarted, started and stopped). Invalid: every error with its JSON pointer, nothing \
        written, nothing restarted (exit status 2). A change that makes no difference writes \
        nothing. --if-match HASH (the hash `settings show --json` printed) refuses the change if \
        the file changed since. Every change is recorded in the run history with its result \
        (`agent-control history`).
        """,
        subcommands: [Show.self, EnableModule.self, DisableModule.self, AddProcess.self, RemoveProcess.self,
                      EnableProcess.self, DisableProcess.self, SetProcess.self])

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Print the settings file as the running agent reads it.",
            discussion: """
            The text as it is in the file: ${env:NAME} references are shown as written, never \
            their values. With --json: {"path", "hash", "text", "settings"}; pass the hash to a \
            change's --if-match.
            """)
        @OptionGroup var location: LocationOptions
        @Flag(name: .long, help: "Print the path, hash, text and parsed document as JSON.")
        var json = false
        func run() throws { try finish(location.daemon().settingsShow(json: json)) }
    }

    /// What every change takes.
    struct ChangeOptions: ParsableArguments {
        @OptionGroup var location: LocationOptions
        @Option(name: .long, help: ArgumentHelp("Refuse the change if the file's hash is no longer this (from `settings show --json`).", valueName: "hash"))
        var ifMatch: String?
        func send(_ action: SettingsChangeAction, name: String, settings: JSONObject = [:]) throws {
            try send(SettingsChangeCommand.Change(action: action, name: name, settings: settings))
        }

        func send(_ change: SettingsChangeCommand.Change) throws {
            try SettingsCommand.finish(location.daemon().settingsChange(change, ifMatch: ifMatch))
        }
    }

    static func finish(_ code: Int32) throws {
        if code != 0 { throw ExitCode(code) }
    }

    /// `--json '{…}'`: a process's settings object.
    static func processSettings(_ text: String) throws -> JSONObject {
        let value: JSONValue
        do {
            value = try JSONValue.parse(text)
        } catch {
            throw ValidationError("--json is not valid JSON: line \(error.line), column \(error.column): \(error.message)")
        }
        guard let object = value.objectValue else {
            throw ValidationError("--json must be a JSON object (the process's settings, e.g. '{\"type\": \"trade_feed\"}'), not \(value.typeName)")
        }
        return object
    }

    struct EnableModule: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "enable-module", abstract: "Add a module to enabled_modules (described and checked first).")
        @Argument(help: "The module's name (or a path to its library).") var name: String
        @OptionGroup var change: ChangeOptions
        func run() throws { try change.send(.enableModule, name: name) }
    }

    struct DisableModule: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "disable-module",
            abstract: "Remove a module from enabled_modules.",
            discussion: "Refused (exit status 2) while a process uses one of its types: remove or change that process first.")
        @Argument(help: "The module's name as enabled_modules has it.") var name: String
        @OptionGroup var change: ChangeOptions
        func run() throws { try change.send(.disableModule, name: name) }
    }

    struct AddProcess: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-process", abstract: "Add a process; it starts once the settings are applied.")
        @Argument(help: "The new process's name.") var name: String
        @Option(name: .long, help: ArgumentHelp("The process's settings, a JSON object, e.g. '{\"type\": \"trade_feed\", \"interval\": 1}'.", valueName: "object"))
        var json: String
        @OptionGroup var change: ChangeOptions
        func run() throws { try change.send(.addProcess, name: name, settings: SettingsCommand.processSettings(json)) }
    }

    struct RemoveProcess: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-process", abstract: "Remove a process; its worker is stopped.")
        @Argument(help: "The process's name.") var name: String
        @OptionGroup var change: ChangeOptions
        func run() throws { try change.send(.removeProcess, name: name) }
    }

    struct EnableProcess: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "enable-process", abstract: "Enable a process (its \"enabled\" key is removed: enabled is the default); it starts.")
        @Argument(help: "The process's name.") var name: String
        @OptionGroup var change: ChangeOptions
        func run() throws { try change.send(.enableProcess, name: name) }
    }

    struct DisableProcess: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "disable-process", abstract: "Disable a process (\"enabled\": false); its worker is stopped.")
        @Argument(help: "The process's name.") var name: String
        @OptionGroup var change: ChangeOptions
        func run() throws { try change.send(.disableProcess, name: name) }
    }

    struct SetProcess: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-process", abstract: "Replace a process's whole settings object; it restarts if they changed.")
        @Argument(help: "The process's name.") var name: String
        @Option(name: .long, help: ArgumentHelp("The process's new settings, a JSON object.", valueName: "object"))
        var json: String
        @OptionGroup var change: ChangeOptions
        func run() throws { try change.send(.setProcess, name: name, settings: SettingsCommand.processSettings(json)) }
    }
}

struct Modules: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "modules",
        abstract: "List the running agent's enabled modules with their process types and kinds.",
        discussion: """
        As describing the modules finds them for the settings file (the runtime's own chat \
        module last). --json adds each process type's settings schema and the host's schema.
        """)
    @OptionGroup var location: LocationOptions
    @Flag(name: .long, help: "Print the modules, their types and settings schemas as JSON.")
    var json = false
    func run() throws { try finish(location.daemon().modules(json: json)) }
}

struct Diagnostics: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diagnostics",
        abstract: "Show the running agent's versions, paths, store, fork server, outputs and limits.")
    @OptionGroup var location: LocationOptions
    @Flag(name: .long, help: "Print the diagnostics as JSON.")
    var json = false
    func run() throws { try finish(location.daemon().diagnostics(json: json)) }
}
