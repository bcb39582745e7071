import ArgumentParser
import Foundation
import JSONSchema

/// `agent-control chat`: a message (the default subcommand), and the conversations' history,
/// transcripts, summaries and the users' preferences.
struct Chat: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat",
        abstract: "Talk to the running agent's chatbot; read, clear, transcribe and sum up conversations; a user's preferences.",
        subcommands: [ChatSend.self, ChatHistory.self, ChatClear.self, ChatTranscriptCLI.self, ChatSummaryCLI.self, ChatPreferencesCLI.self],
        defaultSubcommand: ChatSend.self)
}

/// `agent-control chat [send] [MESSAGE]`.
struct ChatSend: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a message (or talk at a prompt) to the running agent's chatbot.",
        discussion: """
        With a MESSAGE: sends it and prints the answer. Without: a conversation at a prompt \
        (alerts from monitors appear as they come; an empty line or Ctrl-D ends). The agent needs \
        a chatbot process, e.g. "chat": {"type": "chatbot", "logic_adapters": ["features", \
        "status", "latest_value"]}. The history is kept in the store, per conversation and user: \
        the message is from your OS user name unless --user names another.
        """)

    @Argument(help: "The message (omit it for a conversation at a prompt).")
    var message: String?

    @OptionGroup var location: LocationOptions

    @Option(name: .long, help: "The conversation's name.")
    var conversation: String = "default"

    @Option(name: .long, help: "A JSON object passed to the chatbot with each message (e.g. '{\"channel\": \"ops\"}'); the adapters get it with your user and preferences added.")
    var context: String?

    @Option(name: .long, help: "Whom the message is from (default: your OS user name, as the control socket sees it).")
    var user: String?

    @Flag(name: .long, help: "Print the conversation's history (as `chat history`).")
    var history = false

    @Flag(name: .long, help: "Forget the conversation's history (as `chat clear`).")
    var clearHistory = false

    @Option(name: .long, help: "With --history: at most this many lines (the newest).")
    var limit: Int = 100

    @Option(name: .long, help: ArgumentHelp("Send a voice message: a WAV recording, recognised offline by the chatbot (PocketSphinx) and answered as the same words typed.", valueName: "FILE.wav"))
    var voice: String?

    @Flag(name: .long, help: "With --voice: have the answer spoken too (espeak-ng), written to --speech-file.")
    var speak = false

    @Option(name: .long, help: ArgumentHelp("With --speak: where the spoken answer is written.", valueName: "FILE.wav"))
    var speechFile = "answer.wav"

    func validate() throws {
        if voice != nil, message != nil { throw ValidationError("give a MESSAGE or --voice FILE.wav, not both") }
        if speak, voice == nil { throw ValidationError("--speak goes with --voice FILE.wav") }
        if let context {
            guard let value = try? JSONValue.parse(context), value.objectValue != nil else {
                throw ValidationError("--context must be a JSON object, e.g. '{\"user\": \"alice\"}'; found \(context)")
            }
        }
    }

    func run() throws {
        let daemon = try location.daemon()
        if let voice {
            let context = context.flatMap { try? JSONValue.parse($0) }?.objectValue
            return try finish(daemon.sendVoice(file: voice, conversation: conversation, context: context, user: user, speechFile: speak ? speechFile : nil))
        }
        if clearHistory { return try finish(daemon.clearChatHistory(conversation: conversation, user: user)) }
        if history { return try finish(daemon.printChatHistory(conversation: conversation, user: user, limit: limit)) }
        try finish(daemon.chat(message: message, conversation: conversation, context: context.flatMap { try? JSONValue.parse($0) }?.objectValue,
                               user: user, interactive: isatty(0) != 0))
    }
}
