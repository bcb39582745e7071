import AgentBase
import AgentCore
import AgentRuntime
import Foundation
import JSONSchema

/// Figure 16: a voice message → the answer's text, for a 3-second WAV, against the bare
/// PocketSphinx decode of the same WAV in the same run (the floor).
enum VoiceBench {
    static let question = "how many trades in the last five minutes"
    /// The issue's target for the p50 on 2 cores.
    static let targetMilliseconds = 1_000.0

    static func run(_ environment: BenchEnvironment) -> Section {
        let rounds = environment.quick ? 10 : 30
        var section = Section(
            number: 18, title: "Voice messages: a 3-second WAV → the answer's text",
            method: "libespeak-ng speaks \"\(question)\" (22,050 Hz), converted to 16 kHz mono 16-bit and padded with silence to 3.0 s. Through the agent: an agent-control console with a chatbot whose one adapter is sample.trades_counter; the bench sends chat_voice requests (the WAV in base64) on the control socket one after another, \(rounds) measured after 3 to warm up (the first loads the model): request → answer (monotonic clock), the supervisor passing the recording to the chatbot's worker, which reads and converts it, decodes it with PocketSphinx (the grammar from the adapters' examples first) and answers as a text message. Floor, same run, in the bench's own process: a decoder set up as the chatbot's (same model, same grammar) decodes the same samples, \(rounds) times after 3: the decode alone.")
        guard let wav = try? SpeechFloor.spokenWAV(question, seconds: 3), let samples = try? SpeechFloor.samples(of: wav) else {
            section.fail("espeak-ng or PocketSphinx is missing: apt-get install libpocketsphinx-dev pocketsphinx-en-us libespeak-ng-dev")
            return section
        }
        let examples = (try? ModuleLoader.load(path: environment.library("sample"), module: "sample"))?.manifest.processType("trades_counter")?.usageExamples ?? []
        do {
            let floor = try SpeechFloor(examples: examples)
            var decodes = Samples()
            for index in 0..<(rounds + 3) {
                let start = Clock.now()
                let heard = floor.recognise(samples)
                if index >= 3 { decodes.append((Clock.now() - start) * 1000) }
                if index == 0 { section.note("the floor heard: \(heard ?? "nothing")") }
            }
            let agent = try throughAgent(environment, wav: wav, rounds: rounds, section: &section)
            section.add(Figure("voice message → answer text (chat_voice, control socket)", .milliseconds, samples: agent,
                               note: String(format: "target p50 < %.0f ms on 2 cores", targetMilliseconds)))
            section.add(Figure("floor: the bare PocketSphinx decode of the same WAV", .milliseconds, samples: decodes, note: "in-process, grammar search"))
            section.compare("voice message → answer text (chat_voice, control socket)", with: "floor: the bare PocketSphinx decode of the same WAV")
        } catch {
            section.fail("\(error)")
        }
        return section
    }

    static func throughAgent(_ environment: BenchEnvironment, wav: [UInt8], rounds: Int, section: inout Section) throws -> Samples {
        let settings = #"{"enabled_modules": ["sample"], "processes": {"chat": {"type": "chatbot", "logic_adapters": ["sample.trades_counter"]}}}"#
        let (run, directory) = try AgentTaskBench.startAgent(environment, name: "voice", settings: settings, refusalMentioning: "voice")
        defer { AgentTaskBench.stopAgent(run) }
        let paths = AgentPaths(agentDirectory: directory)
        let request: JSONValue = ["command": "chat_voice", "audio": .string(Data(wav).base64EncodedString())]
        var latencies = Samples()
        for index in 0..<(rounds + 3) {
            let start = Clock.now()
            var answer = try ControlClient.send(request, paths: paths, timeout: 60)
            // The chatbot's worker may still be starting: asked again until it runs.
            let deadline = start + 60
            while answer["ok"] != true, answer["error"]?.stringValue?.contains("the chatbot process") == true, Clock.now() < deadline {
                run.pump(maxWait: 0.05)
                answer = try ControlClient.send(request, paths: paths, timeout: 60)
            }
            let elapsed = (Clock.now() - start) * 1000
            guard answer["ok"] == true else { throw BenchError("chat_voice answered \(answer.serialized().prefix(300))") }
            if index >= 3 { latencies.append(elapsed) }
            if index == 0 { section.note("the agent heard: \(answer["transcript"]?.stringValue ?? "?"); answered: \(answer["text"]?.stringValue ?? "?")") }
            run.pump(maxWait: 0)
        }
        return latencies
    }
}
