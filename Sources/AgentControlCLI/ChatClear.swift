import ArgumentParser
import Foundation

/// `agent-control chat clear [--user U] [--conversation C]`.
struct ChatClear: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear",
        abstract: "Forget a conversation's history, a user's (every conversation), or a user's in one conversation.",
        discussion: "Without --user and --conversation: the conversation \"default\". A conversation with no line is not found (exit status 1).")

    @OptionGroup var selection: ChatSelectionOptions

    @OptionGroup var location: LocationOptions

    func run() throws {
        try finish(try location.daemon().clearChatHistory(conversation: selection.resolvedConversation, user: selection.user))
    }
}
