import AgentCommands
import ArgumentParser
import Foundation
import JSONSchema

/// `agent-control chat preferences [--user U] [--set KEY=VALUE ...] [--json OBJ]`.
struct ChatPreferencesCLI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preferences",
        abstract: "Show or change a user's chat preferences (language, units, verbosity, custom members).",
        discussion: """
        Without --set or --json: prints them. --set language=fr, units=metric|imperial, \
        verbosity=brief|normal|detailed; any other KEY sets a custom member (VALUE read as JSON when \
        it is JSON, else as text; null removes it), checked against the chatbot's preferences_schema. \
        --json '{"timezone": "Europe/Paris"}' sets custom members from an object.
        """)

    @Option(name: .long, help: "Whose (default: your OS user name).")
    var user: String?

    @Option(name: .long, parsing: .singleValue, help: ArgumentHelp("Change one preference.", valueName: "KEY=VALUE"))
    var set: [String] = []

    @Option(name: .long, help: ArgumentHelp("Custom members to set, as a JSON object.", valueName: "OBJ"))
    var json: String?

    @OptionGroup var location: LocationOptions

    func validate() throws {
        _ = try change()
    }

    /// The change asked for (nil: only show).
    func change() throws -> ChatPreferencesSetCommand.Request? {
        guard !set.isEmpty || json != nil else { return nil }
        var request = ChatPreferencesSetCommand.Request(user: user)
        var custom: JSONObject = [:]
        if let json {
            guard case .object(let object)? = try? JSONValue.parse(json) else { throw ValidationError("--json must be a JSON object, e.g. '{\"timezone\": \"Europe/Paris\"}'; found \(json)") }
            custom = object
        }
        for item in set {
            guard let equals = item.firstIndex(of: "="), equals != item.startIndex else { throw ValidationError("--set takes KEY=VALUE, e.g. language=fr; found \(item)") }
            let key = String(item[..<equals]), value = String(item[item.index(after: equals)...])
            switch key {
            case "language": request.language = value
            case "units": request.units = value
            case "verbosity": request.verbosity = value
            default: custom[key] = (try? JSONValue.parse(value)) ?? .string(value)
            }
        }
        if !custom.isEmpty { request.custom = custom }
        return request
    }

    func run() throws {
        let request = try change().map { ChatPreferencesSetCommand.request($0) } ?? ChatPreferencesCommand.request(.init(user: user))
        let answer = try TaskCommand.send(request, location: location)
        print("\(answer["user"]?.stringValue ?? "?"): \(answer["preferences"]?.serialized() ?? "{}")")
    }
}
