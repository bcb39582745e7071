import AgentWork
import ArgumentParser
import Foundation
import JSONSchema

/// `workflow define|delete|add-step`: a workflow's definition changed through the running agent
/// by the definition commands (`workflow_create`, `workflow_update`, `workflow_delete`,
/// `workflow_add_step`, as `PUT /api/workflows/{name}` and the others), each the settings
/// change it stands for.
enum WorkflowDefinitionChange {
    static let discussion = """
        The change goes through the running agent as `agent-control settings` changes do: checked \
        as validate-settings checks the settings it would make (invalid: every error with its JSON \
        pointer, nothing written, exit status 2), written keeping the file's formatting, applied by \
        reload; runs going keep the definition they started with. --if-match HASH (from \
        `settings show --json`) refuses it if the file changed since.
        """

    /// A JSON object given as text or @FILE (`what` names it in errors).
    static func object(_ text: String, what: String) throws -> JSONObject {
        let value: JSONValue
        do {
            value = try JSONValue.parse(text.hasPrefix("@") ? try file(String(text.dropFirst())) : Data(text.utf8))
        } catch let error as JSONParseError {
            throw ValidationError("\(what) is not valid JSON at line \(error.line), column \(error.column): \(error.message)")
        }
        guard let object = value.objectValue else { throw ValidationError("\(what) must be a JSON object, not \(value.typeName)") }
        return object
    }

    private static func file(_ path: String) throws -> Data {
        try ArgumentFile.read(path, what: "@\(path)")
    }

    static func send<C: WorkflowChangeCommand>(_ command: C.Type, _ request: C.Request, options: SettingsCommand.ChangeOptions) throws {
        try SettingsCommand.finish(options.location.daemon().change(command.request(request)))
    }
}

struct WorkflowDefine: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "define",
        abstract: "Add a workflow definition to the settings (with --replace: replace an existing one's).",
        discussion: WorkflowDefinitionChange.discussion + """


        Example: agent-control workflow define support --json '{"steps": [{"id": "classify", "task": "classify"}]}'
        """)

    @Argument(help: "The workflow's name (under \"workflows\" in settings.json).")
    var name: String

    @Option(name: .long, help: ArgumentHelp("The definition: a JSON object {\"input\"?, \"on_event\"?, \"steps\": [...]}, or @FILE.", valueName: "object"))
    var json: String

    @Flag(name: .long, help: "Replace the definition of an existing workflow (without it, an existing name is refused).")
    var replace = false

    @OptionGroup var change: SettingsCommand.ChangeOptions

    func run() throws {
        let definition = try WorkflowDefinitionChange.object(json, what: "--json")
        let request = WorkflowDefinitionRequest(name: name, definition: definition, ifMatch: change.ifMatch)
        if replace {
            try WorkflowDefinitionChange.send(WorkflowUpdateCommand.self, request, options: change)
        } else {
            try WorkflowDefinitionChange.send(WorkflowCreateCommand.self, request, options: change)
        }
    }
}

struct WorkflowDelete: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Remove a workflow definition from the settings (runs going finish on their copy).",
        discussion: WorkflowDefinitionChange.discussion + " Refused while something else (a schedule) names the workflow.")

    @Argument(help: "The workflow's name.")
    var name: String

    @OptionGroup var change: SettingsCommand.ChangeOptions

    func run() throws {
        try WorkflowDefinitionChange.send(WorkflowDeleteCommand.self, .init(name: name, ifMatch: change.ifMatch), options: change)
    }
}

struct WorkflowAddStep: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add-step",
        abstract: "Insert a step into a workflow's top-level steps at a position (default: last).",
        discussion: WorkflowDefinitionChange.discussion + """


        Example: agent-control workflow add-step support --position 1 --json '{"id": "announce", "publish": {"type": "ticket.classified"}}'
        """)

    @Argument(help: "The workflow's name.")
    var name: String

    @Option(name: .long, help: ArgumentHelp("The step: a JSON object {\"id\", and its kind's key}, or @FILE.", valueName: "object"))
    var json: String

    @Option(name: .long, help: "The step's index once inserted (0: first; default: after the last).")
    var position: Int?

    @OptionGroup var change: SettingsCommand.ChangeOptions

    func validate() throws {
        if let position, position < 0 { throw ValidationError("--position must be 0 or more, not \(position)") }
    }

    func run() throws {
        let step = try WorkflowDefinitionChange.object(json, what: "--json")
        try WorkflowDefinitionChange.send(WorkflowAddStepCommand.self, .init(name: name, step: step, position: position, ifMatch: change.ifMatch), options: change)
    }
}
