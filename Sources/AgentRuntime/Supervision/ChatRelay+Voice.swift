import AgentBase
import AgentCommands
import AgentCore
import AgentLoop
import AgentSupervision
import AgentWork
import Foundation
import JSONSchema

extension ChatRelay {
    /// `chat_voice`: the recording goes to the chatbot as a `chat.voice` event (a JSON header,
    /// a line feed, the WAV's bytes), recognised and answered in its worker. Its size is
    /// checked here, before the base64 is decoded; everything else about the audio is read in
    /// the worker, never on the supervisor's loop.
    func voice(_ request: ChatVoiceCommand.Request, caller: CommandCaller, respond: @escaping (Result<ChatVoiceCommand.Answer, CommandError>) -> Void) {
        let bot: SupervisedProcess
        switch chatbot() {
        case .success(let found): bot = found
        case .failure(let refusal): return respond(.failure(refusal))
        }
        let limit = bot.settings["voice"]?["max_bytes"]?.numberValue?.intValue ?? VoiceLimits.defaultMaximumBytes
        // Base64 makes 3 bytes 4 characters: the decoded size is known before decoding.
        let size = request.audio.utf8.count / 4 * 3
        guard size <= limit + 2 else {
            return respond(.failure(CommandError(.tooLarge, "the recording is about \(size) bytes; the chatbot \(bot.name) takes at most \(limit) (its voice.max_bytes)", pointer: "/audio")))
        }
        let user: String
        switch ChatUser.sender(requested: request.user, context: request.context, caller: caller) {
        case .success(let sender): user = sender
        case .failure(let refusal): return respond(.failure(refusal))
        }
        // Megabytes of base64 take tens of milliseconds to decode: off the loop.
        let inbox = loop.inbox, encoded = request.audio
        let decoded = LoopOwned({ [weak self] (audio: Data?) in
            guard let audio else {
                return respond(.failure(.invalid("/audio: expected the WAV file in base64; found characters base64 does not use", pointer: "/audio")))
            }
            self?.deliverVoice(audio, request: request, user: user, caller: caller, respond: respond)
        })
        BlockingPool.storeReads.submit {
            let audio = Data(base64Encoded: encoded)
            inbox.post { decoded.value(audio) }
        }
    }

    /// Hands a decoded recording to the chatbot with its sender's preferences in the context.
    private func deliverVoice(_ audio: Data, request: ChatVoiceCommand.Request, user: String, caller: CommandCaller,
                              respond: @escaping (Result<ChatVoiceCommand.Answer, CommandError>) -> Void) {
        withPreferences(of: user) { [self] preferences in
            guard case .success(let bot) = chatbot() else { return respond(.failure(CommandError(.failed, "the chatbot process stopped"))) }
            let conversation = request.conversation ?? "default"
            var header: JSONObject = [
                "conversation": .string(conversation), "speak": .bool(request.speak ?? false),
                "processes": .array(processes().map { SupervisedProcessInfo($0).json }),
                "context": .object(Self.context(request.context, user: user, preferences: preferences)),
                // When its sender stops waiting (CLOCK_MONOTONIC): the recognition is given up then.
                "deadline": .number(JSONNumber(EventLoop.now() + Self.replyTimeout)),
            ]
            let id = awaitReply(caller: caller, conversation: conversation, user: user,
                                { value, tail in respond(Self.voiceReply(value, speech: tail)) }, fail: { respond(.failure($0)) })
            header["id"] = .string(id)
            header["caller"] = ChatToolBridge.describe(caller)
            var payload = JSONValue.object(header).serializedBytes()
            payload.append(0x0A)
            payload += audio
            if let refusal = hand(payload, type: "chat.voice", id: id, to: bot, pointer: "/audio") { respond(.failure(refusal)) }
        }
    }

    /// A voice `chat.reply` as the answer to `chat_voice`; a refusal's `code` says which
    /// status it gets (a bad recording is the caller's, missing packages the host's).
    nonisolated static func voiceReply(_ value: JSONValue, speech: ArraySlice<UInt8>?) -> Result<ChatVoiceCommand.Answer, CommandError> {
        let text = value["text"]?.stringValue ?? ""
        if let code = value["code"]?.stringValue {
            let details: JSONObject = ["reason": .string(code)]
            switch code {
            case "too_large": return .failure(CommandError(.tooLarge, text, pointer: "/audio", details: details))
            case "unavailable", "timed_out": return .failure(CommandError(.unavailable, text, details: details))
            default: return .failure(CommandError(.invalid, text, pointer: "/audio", details: details))
            }
        }
        guard let transcript = value["transcript"]?.stringValue else {
            return .failure(CommandError(.failed, value["error"] == .bool(true) ? text : "the chatbot's reply to a voice message has no transcript; restart the chatbot process"))
        }
        var answer = ChatVoiceCommand.Answer(text: text, adapter: value["adapter"]?.stringValue, confidence: value["confidence"]?.numberValue?.doubleValue,
                                             transcript: transcript, transcriptConfidence: value["transcript_confidence"]?.numberValue?.doubleValue ?? 0,
                                             search: value["search"]?.stringValue, speechError: value["speech_error"]?.stringValue)
        answer.speech = speech.map { Data($0).base64EncodedString() }
        return .success(answer)
    }
}
