import ArgumentParser
import Foundation
import JSONSchema

struct Chat: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Talk to the running agent's chatbot.",
        discussion: """
        With a MESSAGE: sends it and prints the answer. Without: a conversation at a prompt \
        (alerts from monitors appear as they come; an empty line or Ctrl-D ends). The agent needs \
        a chatbot process, e.g. "chat": {"type": "chatbot", "logic_adapters": ["features", \
        "status", "latest_value"]}. The history is kept in the store, per conversation.
        """)

    @Argument(help: "The message (omit it for a conversation at a prompt).")
    var message: String?

    @OptionGroup var location: LocationOptions

    @Option(name: .long, help: "The conversation's name.")
    var conversation: String = "default"

    @Option(name: .long, help: "A JSON object passed to the chatbot with each message (e.g. '{\"user\": \"alice\"}'); the rest adapter forwards it.")
    var context: String?

    @Flag(name: .long, help: "Print the conversation's history.")
    var history = false

    @Flag(name: .long, help: "Forget the conversation's history.")
    var clearHistory = false

    @Option(name: .long, help: "With --history: at most this many lines (the newest).")
    var limit: Int = 100

    func validate() throws {
        if let context {
            guard let value = try? JSONValue.parse(context), value.objectValue != nil else {
                throw ValidationError("--context must be a JSON object, e.g. '{\"user\": \"alice\"}'; found \(context)")
            }
        }
    }

    func run() throws {
        let daemon = try location.daemon()
        if clearHistory { return try finish(daemon.clearChatHistory(conversation: conversation)) }
        if history { return try finish(daemon.printChatHistory(conversation: conversation, limit: limit)) }
        try finish(daemon.chat(message: message, conversation: conversation, context: context.flatMap { try? JSONValue.parse($0) }?.objectValue, interactive: isatty(0) != 0))
    }
}
