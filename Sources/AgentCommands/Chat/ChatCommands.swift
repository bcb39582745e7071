import AgentBase
import JSONSchema

/// The chat commands (`agent-control chat`, `/api/chat`).
package enum ChatCommands {
    /// Every typed chat command.
    package static let all: [any AgentCommand.Type] = [
        ChatCommand.self, ChatHistoryCommand.self, ChatClearCommand.self, ChatVoiceCommand.self, ChatTranscriptCommand.self, ChatSummaryCommand.self,
        ChatPreferencesCommand.self, ChatPreferencesSetCommand.self,
    ]

    package static let conversation: JSONValue = [
        "type": "string", "minLength": 1, "maxLength": 200, "pattern": .string(ControlCharacters.nonePattern), "default": "default",
        "description": "The conversation (default: \"default\"; no control characters).",
    ]
}
