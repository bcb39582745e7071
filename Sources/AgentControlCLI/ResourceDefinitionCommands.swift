import AgentBase
import AgentCommands
import AgentRuntime
import ArgumentParser
import Foundation
import JSONSchema

/// `task|schedule|executor define|get|delete`: one resource of the settings read or changed
/// through the running agent by the resource commands (`task_create`, `task_update`,
/// `task_get`, `task_delete`, as `POST /api/tasks` and `GET|PUT|DELETE /api/tasks/{name}`),
/// each change the settings change it stands for.
enum ResourceDefinitionChange {
    /// `task define|get|delete`, and the same of `schedule` and `executor`.
    static let task = subcommands(TaskResource.self)
    static let schedule = subcommands(ScheduleResource.self)
    static let executor = subcommands(ExecutorResource.self)

    private static func subcommands<Kind: SettingsResourceKind>(_ kind: Kind.Type) -> [any ParsableCommand.Type] {
        [ResourceDefine<Kind>.self, ResourceGet<Kind>.self, ResourceDelete<Kind>.self]
    }

    /// The definition given as --json (text or @FILE) or --file.
    static func definition(json: String?, file: String?) throws -> JSONObject {
        switch (json, file) {
        case (let text?, nil): return try WorkflowDefinitionChange.object(text, what: "--json")
        case (nil, let path?): return try WorkflowDefinitionChange.object("@" + path, what: "--file \(path)")
        default: throw ValidationError("give the definition as --json JSON (or @FILE) or as --file FILE, one of them")
        }
    }
}

struct ResourceDefine<Kind: SettingsResourceKind>: ParsableCommand {
    static var configuration: CommandConfiguration {
        let resource = Kind.resource
        return CommandConfiguration(
            commandName: "define",
            abstract: "Add a \(resource.rawValue) to the settings (with --replace: replace an existing one's definition).",
            discussion: WorkflowDefinitionChange.discussion + """


            Example: agent-control \(resource.rawValue) define \(ResourceCommands.exampleName(resource)) --json '\(JSONValue.object(resource.example).serialized())'
            """)
    }

    @Argument(help: ArgumentHelp("The \(Kind.resource.rawValue)'s name (under \"\(Kind.resource.collection)\" in settings.json)."))
    var name: String

    @Option(name: .long, help: ArgumentHelp("The definition: a JSON object as under \"\(Kind.resource.collection)\" in settings.json, or @FILE.", valueName: "object"))
    var json: String?

    @Option(name: .long, help: ArgumentHelp("A file holding the definition (a JSON object).", valueName: "path"))
    var file: String?

    @Flag(name: .long, help: "Replace the definition of an existing one (without it, an existing name is refused).")
    var replace = false

    @OptionGroup var change: SettingsCommand.ChangeOptions

    func run() throws {
        let definition = try ResourceDefinitionChange.definition(json: json, file: file)
        let request = DefinitionRequest(name: name, definition: definition, ifMatch: change.ifMatch)
        let sent = replace ? ResourceUpdateCommand<Kind>.request(request) : ResourceCreateCommand<Kind>.request(request)
        try SettingsCommand.finish(change.location.daemon().change(sent))
    }
}

struct ResourceGet<Kind: SettingsResourceKind>: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "get",
            abstract: "Print a \(Kind.resource.rawValue)'s definition as the settings file has it.",
            discussion: "${env:NAME} references are shown as written, never their values. The file's hash goes to standard error; with --json: {\"name\", \"definition\", \"hash\"} (pass the hash to a change's --if-match).")
    }

    @Argument(help: ArgumentHelp("The \(Kind.resource.rawValue)'s name."))
    var name: String

    @Flag(name: .long, help: "Print the name, definition and hash as JSON.")
    var json = false

    @OptionGroup var location: LocationOptions

    func run() throws {
        try SettingsCommand.finish(location.daemon().resourceShow(ResourceGetCommand<Kind>.request(.init(name: name)), json: json))
    }
}

struct ResourceDelete<Kind: SettingsResourceKind>: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "delete",
            abstract: "Remove a \(Kind.resource.rawValue) from the settings.",
            discussion: WorkflowDefinitionChange.discussion + " Refused (exit status 1, nothing written) while anything else in the settings names it; the refusal names each.")
    }

    @Argument(help: ArgumentHelp("The \(Kind.resource.rawValue)'s name."))
    var name: String

    @OptionGroup var change: SettingsCommand.ChangeOptions

    func run() throws {
        try SettingsCommand.finish(change.location.daemon().change(ResourceDeleteCommand<Kind>.request(.init(name: name, ifMatch: change.ifMatch))))
    }
}
