import AgentBase
import AgentCommands
import AgentRuntime
import ArgumentParser
import Foundation
import JSONSchema

/// `agent-control publish TYPE [--payload JSON] [--source NAME]`.
struct Publish: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish an event into the running agent, as a process's emit: to its monitors, on_event triggers, waiting workflow runs (and the fleet, for a type under fleet.publish).",
        discussion: """
        Answered once the event is routed and committed to the store: an event reported published \
        is in the event log. Refused with the pointer of what is wrong: a type that is not a plain \
        name (letters, digits, '_', '-', '.') or one the runtime publishes itself, a payload over \
        /events/max_payload_bytes (64 KiB by default) or against the schema its type declares under \
        /events/types, or a store that cannot write (try again later).

        Example: agent-control publish order.confirmed --payload '{"order": 7}' --source shop
        """)

    @Argument(help: "The event type, e.g. order.confirmed.")
    var type: String

    @Option(name: .long, help: "The payload: JSON, or @FILE to read it from a file (default: {}).")
    var payload: String?

    @Option(name: .long, help: "Who publishes, as the event's source (default: cli).")
    var source: String?

    @Flag(name: .long, help: "Print the answer as JSON.")
    var json = false

    @OptionGroup var location: LocationOptions

    func run() throws {
        let request = EventPublishCommand.Request(type: type, payload: try payload.map { try TaskRunCommand.readInput($0, option: "--payload") }, source: source)
        let answer = try TaskCommand.send(EventPublishCommand.request(request), location: location)
        print(json ? answer.serialized() : "published \(type) from \(answer["source"]?.stringValue ?? "?") at \(answer["time"]?.stringValue ?? "?")")
    }
}
