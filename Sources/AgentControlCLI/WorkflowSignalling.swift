import AgentBase
import AgentRuntime
import AgentWork
import ArgumentParser
import Foundation
import JSONSchema

/// `agent-control workflow signal RUN NAME [--payload JSON]`.
struct WorkflowSignalling: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signal",
        abstract: "Send a signal to one workflow run: its waiting wait_signal step of that name goes on, with the payload as ${steps:ID/payload}.",
        discussion: """
        A signal goes to one run, never to others. If no wait_signal step of that name waits yet, \
        the run keeps the signal (committed) and its first such step takes it when it starts (at \
        most 100 kept). Answered once committed (on a full disk, once kept in the store's run \
        journal; refused, unavailable, while that has no room either). An unknown run is refused \
        (not found), a finished one too (conflict).

        Example: agent-control workflow signal wf-1a2b-3 customer.replied --payload '{"text": "yes"}'
        """)

    @Argument(help: "The run's id.")
    var runID: String

    @Argument(help: "The signal's name, as the run's wait_signal step names it.")
    var name: String

    @Option(name: .long, help: "The payload: JSON, or @FILE to read it from a file (default: {}).")
    var payload: String?

    @Flag(name: .long, help: "Print the answer as JSON.")
    var json = false

    @OptionGroup var location: LocationOptions

    func run() throws {
        let request = WorkflowSignalCommand.Request(id: runID, name: name, payload: try payload.map { try TaskRunCommand.readInput($0, option: "--payload") })
        let answer = try TaskCommand.send(WorkflowSignalCommand.request(request), location: location)
        if json { return print(answer.serialized()) }
        if let step = answer["step"]?.stringValue {
            print("\(runID): signal \(name) taken by step \(step)")
        } else {
            print("\(runID): signal \(name) kept until a wait_signal step of that name starts")
        }
    }
}
