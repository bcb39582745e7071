import AgentBase
import AgentCommands
import AgentCore
import ArgumentParser
import Foundation

/// `agent-control chat transcript CONVERSATION [--format text|json|markdown]`.
struct ChatTranscriptCLI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transcript",
        abstract: "Write a conversation out whole: as text, Markdown, or its lines as JSON.")

    @Argument(help: "The conversation.")
    var conversation: String

    @Option(name: .long, help: "text, markdown or json.")
    var format = "text"

    @Option(name: .long, help: "Only this user's lines.")
    var user: String?

    @OptionGroup var location: LocationOptions

    func validate() throws {
        guard ChatTranscriptCommand.formats.contains(format) else {
            throw ValidationError("--format must be text, markdown or json, not \"\(format)\"")
        }
    }

    func run() throws {
        let answer = try TaskCommand.send(ChatTranscriptCommand.request(.init(conversation: conversation, format: format, user: user)), location: location)
        if format == "json" {
            print(answer["lines"].map { $0.serialized() } ?? "[]")
        } else {
            print(TerminalText.shown(answer["text"]?.stringValue ?? ""), terminator: "")
        }
        // On stderr, so that what stdout carries keeps its shape.
        if answer["truncated"] == .bool(true) {
            FileHandle.standardError.write(Data(("note: the conversation has more lines than a transcript holds (\(ChatTranscriptCommand.maximumLines) lines, "
                + "or \(ListAnswerSize.bytes >> 20) MiB of text); this is its newest part\n").utf8))
        }
    }
}
