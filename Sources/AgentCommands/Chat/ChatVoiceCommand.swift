import AgentBase
import Foundation
import JSONSchema

/// `chat_voice`: a voice message (a WAV recording) to the chatbot, recognised in its worker and
/// answered as the same words typed would be; the reply can be spoken back.
package enum ChatVoiceCommand: AgentCommand {
    package typealias Host = any ChatCommandHost

    package struct Request: Codable, Sendable, Equatable {
        /// The WAV file, base64 (HTTP takes the file itself as an `audio/wav` body).
        package var audio: String
        package var conversation: String?
        package var context: JSONObject?
        /// Whether the answer comes spoken too (a WAV in `speech`).
        package var speak: Bool?
        /// Who sends it (see ``ChatUser``): the caller's own by default.
        package var user: String?

        package init(audio: String, conversation: String? = nil, context: JSONObject? = nil, speak: Bool? = nil, user: String? = nil) {
            self.user = user
            self.audio = audio
            self.conversation = conversation
            self.context = context
            self.speak = speak
        }
    }

    /// The chatbot's reply, with what it heard.
    package struct Answer: Encodable, Sendable, Equatable {
        package let ok = true
        package var text: String
        package var adapter: String?
        package var confidence: Double?
        /// The words recognised (numbers as digits), answered as a text message.
        package var transcript: String
        /// The recogniser's posterior probability of the transcript (0…1).
        package var transcriptConfidence: Double
        /// `grammar` (an adapter's usage example matched) or `language_model`.
        package var search: String?
        /// The spoken answer: a 16-bit mono WAV file, base64.
        package var speech: String?
        /// Why the answer could not be spoken (the text stands).
        package var speechError: String?

        enum CodingKeys: String, CodingKey {
            case ok, text, adapter, confidence, transcript, transcriptConfidence = "transcript_confidence", search, speech, speechError = "speech_error"
        }

        package init(text: String, adapter: String? = nil, confidence: Double? = nil, transcript: String, transcriptConfidence: Double,
                     search: String? = nil, speech: String? = nil, speechError: String? = nil) {
            self.text = text
            self.adapter = adapter
            self.confidence = confidence
            self.transcript = transcript
            self.transcriptConfidence = transcriptConfidence
            self.search = search
            self.speech = speech
            self.speechError = speechError
        }
    }

    package static let name = "chat_voice"
    package static let summary = "Sends a voice message (a WAV recording) to the chatbot: recognised offline in its worker, answered as the same words typed; the answer can be spoken."
    package static let routes: [CommandRoute] = [.post("/api/chat/voice", binaryBody: CommandRoute.BinaryBody(member: "audio", mediaTypes: ["audio/wav", "audio/x-wav", "audio/wave"]))]
    package static let mutating = true
    /// Any role may send a voice message, as any may type one (``ChatCommand/requiresAdmin``).
    package static let requiresAdmin = false
    package static let answersWhileStopping = true
    /// The control socket's request limit (1 MiB) with room for the other members: base64
    /// makes 3 bytes 4 characters. The chatbot's voice.max_bytes is checked by the relay.
    package static let maximumSocketAudioBytes = 760 * 1024
    package static let requestSchema: JSONValue = CommandSchema.object([
        "audio": ["type": "string", "minLength": 1, "contentEncoding": "base64", "contentMediaType": "audio/wav",
                  "description": "The recording: a WAV file (PCM 8/16/24/32-bit or 32-bit float, 8–192 kHz, any channels), base64. Over HTTP, POST the file itself as an audio/wav body with the other members in the query."],
        "conversation": ChatCommands.conversation,
        "context": ["type": "object", "description": "Passed to the chatbot with the message (a user id, a channel…)."],
        "user": ChatUser.schema,
        "speak": ["type": "boolean", "default": false, "description": "Answer with speech too: a WAV made by espeak-ng, base64 in speech."],
    ], required: ["audio"])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "text": ["type": "string"],
        "adapter": ["type": "string", "description": "The logic adapter that answered."],
        "confidence": ["type": "number", "description": "How sure the adapter is (0…1)."],
        "transcript": ["type": "string", "description": "What was recognised, numbers as digits; kept in the conversation."],
        "transcript_confidence": ["type": "number", "minimum": 0, "maximum": 1, "description": "The recogniser's posterior probability of the transcript."],
        "search": ["type": "string", "enum": ["grammar", "language_model"], "description": "grammar: an adapter's usage example matched; language_model: the free model's words."],
        "speech": ["type": "string", "contentEncoding": "base64", "contentMediaType": "audio/wav", "description": "With speak: the answer spoken, a 16-bit mono WAV."],
        "speech_error": ["type": "string", "description": "With speak: why the answer could not be spoken."],
    ], required: ["ok", "text", "transcript", "transcript_confidence"], open: true)
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [(["audio": "UklGRiQAAABXQVZF…", "conversation": "ops"],
          Answer(text: "There were 12 trades in the last 5 minutes (X/Y 12).", adapter: "sample.trades_counter", confidence: 0.9,
                 transcript: "how many trades in the last 5 minutes", transcriptConfidence: 1, search: "grammar"))]
    }

    package static func run(_ request: Request, on host: any ChatCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.voice(request, caller: caller, respond: respond)
    }
}
