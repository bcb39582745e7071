import AgentCommands
import AgentCore
import ArgumentParser
import Foundation

/// `agent-control chat summary CONVERSATION [--json]`.
struct ChatSummaryCLI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "summary",
        abstract: "Sum up a conversation: when, who, how many messages, topics, alerts, actions.",
        discussion: "Made from its lines without a model, or by the chatbot's llm adapter when it has \"summary\": true (falling back, and saying so, when the model fails).")

    @Argument(help: "The conversation.")
    var conversation: String

    @Option(name: .long, help: "Only this user's lines.")
    var user: String?

    @Flag(name: .long, help: "Print the whole answer as JSON.")
    var json = false

    @OptionGroup var location: LocationOptions

    func run() throws {
        let answer = try TaskCommand.send(ChatSummaryCommand.request(.init(conversation: conversation, user: user)), location: location, timeout: 40)
        if json { return print(answer.serialized()) }
        print(TerminalText.shown(answer["text"]?.stringValue ?? ""))
        if let error = answer["model_error"]?.stringValue { print("(made without the language model, which failed: \(error))") }
    }
}
