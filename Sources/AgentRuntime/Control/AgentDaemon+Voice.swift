import AgentBase
import AgentCommands
import Foundation
import JSONSchema

extension AgentDaemon {
    /// `agent-control chat --voice FILE.wav [--speak]`: sends the recording, prints what was
    /// heard and the answer; with a `speechFile`, writes the spoken answer there.
    public func sendVoice(file: String, conversation: String, context: JSONObject?, user: String? = nil, speechFile: String?) -> Int32 {
        let audio: Data
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
            // Checked before reading: the socket takes a request of at most 1 MiB.
            guard size <= ChatVoiceCommand.maximumSocketAudioBytes else {
                return Self.fail("\(file) is \(size) bytes; over the control socket a recording can be at most \(ChatVoiceCommand.maximumSocketAudioBytes) bytes (about 24 s of 16 kHz mono 16-bit); send a shorter one, or POST it to /api/chat/voice")
            }
            audio = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            return Self.fail("cannot read \(file): \((error as NSError).localizedDescription)")
        }
        let request = ChatVoiceCommand.request(.init(audio: audio.base64EncodedString(), conversation: conversation, context: context, speak: speechFile != nil, user: user))
        let answer: JSONValue
        do {
            answer = try ControlClient.send(request, paths: paths, timeout: 40)
        } catch {
            return Self.fail(error)
        }
        guard answer["ok"] == true else { return Self.fail(answer["error"]?.stringValue ?? "the agent refused the voice message") }
        let confidence = answer["transcript_confidence"]?.numberValue?.doubleValue ?? 0
        print("you (voice, confidence \(String(format: "%.2f", confidence)))> \(answer["transcript"]?.stringValue ?? "")")
        print("bot> \(answer["text"]?.stringValue ?? "")")
        guard let speechFile else { return AgentLauncher.ExitCode.success }
        guard let speech = answer["speech"]?.stringValue, let wav = Data(base64Encoded: speech) else {
            return Self.fail("the answer was not spoken: \(answer["speech_error"]?.stringValue ?? "the chatbot sent no speech")")
        }
        do {
            try wav.write(to: URL(fileURLWithPath: speechFile))
        } catch {
            return Self.fail("cannot write the spoken answer to \(speechFile): \((error as NSError).localizedDescription)")
        }
        print("the spoken answer is in \(speechFile)")
        return AgentLauncher.ExitCode.success
    }
}
