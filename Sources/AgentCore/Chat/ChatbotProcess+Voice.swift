import Foundation
import JSONSchema

extension ChatbotProcess {
    /// At most this much of an answer is spoken (about a minute of speech).
    static let mostSpokenCharacters = 1_000

    /// A `chat.voice` event: a JSON header (`id`, `conversation`, `context`, `processes`,
    /// `speak`), a line feed, then the WAV file's bytes. Answered with a `chat.reply` like a
    /// text message's, plus `transcript` and its `transcript_confidence`; with `speak`, the
    /// reply's JSON is followed by a line feed and the spoken answer as a WAV file.
    func answerVoice(_ payload: UnsafeRawBufferPointer) {
        guard let split = payload.firstIndex(of: 0x0A),
              let header = try? JSONValue.parse(UnsafeRawBufferPointer(rebasing: payload[..<split])) else {
            host.sendText(.log, level: JSONLinesFrame.Message.Level.warning.number, "a chat.voice event without its JSON header was ignored")
            return
        }
        let audio = Array(payload[(split + 1)...])
        let id = header["id"]?.stringValue ?? ""
        let conversation = header["conversation"]?.stringValue ?? "default"
        // The sender's deadline (the relay's 30 s), less the reply's margin.
        let deadline = (header["deadline"]?.numberValue?.doubleValue).map { $0 - Self.replyMargin } ?? .infinity
        let transcript: SpeechRecognizer.Transcript
        do {
            transcript = try voice.transcribe(audio, until: deadline)
        } catch {
            let refusal: JSONObject = ["id": .string(id), "conversation": .string(conversation), "error": true,
                                       "code": .string(error.code.rawValue), "text": .string(error.message)]
            return host.emitJSON("chat.reply", .object(refusal))
        }
        let message = ChatMessage(id: id, conversation: conversation, text: transcript.text,
                                  processes: header["processes"]?.arrayValue ?? [], context: header["context"], caller: header["caller"], spoken: true)
        guard case .object(var reply) = answer(message) else { return }
        reply["transcript"] = .string(transcript.text)
        reply["transcript_confidence"] = .number(JSONNumber(transcript.confidence))
        reply["search"] = .string(transcript.search)
        var bytes = JSONValue.object(reply).serializedBytes()
        if header["speak"] == .bool(true), let text = reply["text"]?.stringValue {
            do {
                // A long answer (a status of many processes) is spoken up to a bound: its text is all there.
                let speech = try SpeechSynthesizer.shared.get().speak(String(text.prefix(Self.mostSpokenCharacters)))
                bytes.append(0x0A)
                bytes += speech
            } catch {
                // The answer stands without its voice; the reason goes along.
                reply["speech_error"] = .string(error.message)
                bytes = JSONValue.object(reply).serializedBytes()
            }
        }
        host.emit("chat.reply", bytes: bytes)
    }
}
