import ArgumentParser
import Foundation

/// `agent-control chat history [--user U] [--conversation C]`.
struct ChatHistory: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print a conversation's history, a user's (every conversation), or a user's in one conversation.",
        discussion: "Without --user and --conversation: the conversation \"default\". The operator (the control socket) reads any user's; over HTTP a non-admin reads only their own.")

    @OptionGroup var selection: ChatSelectionOptions

    @Option(name: .long, help: "At most this many lines (the newest).")
    var limit: Int = 100

    @OptionGroup var location: LocationOptions

    func run() throws {
        try finish(try location.daemon().printChatHistory(conversation: selection.resolvedConversation, user: selection.user, limit: limit))
    }
}
