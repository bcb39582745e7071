import ArgumentParser

/// The lines `chat history` and `chat clear` are about: a conversation, a user's, or a user's in one.
struct ChatSelectionOptions: ParsableArguments {
    @Option(name: .long, help: "Only this user's lines; without --conversation, in every conversation.")
    var user: String?

    @Option(name: .long, help: "The conversation (default: \"default\", or every conversation with --user).")
    var conversation: String?

    /// The conversation asked for: "default" unless a user is named.
    var resolvedConversation: String? { conversation ?? (user == nil ? "default" : nil) }
}
