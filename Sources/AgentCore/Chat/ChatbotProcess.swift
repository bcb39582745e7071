import AgentModuleABI
import Foundation
import JSONSchema

/// The runtime's `chatbot` process, run by a worker itself: asks every configured adapter how
/// confident it is about each `chat.message` and lets the most confident answer with a
/// `chat.reply` event.
final class ChatbotProcess {
    let host: WorkerHost
    var adapters: [any ChatAdapter] = []
    /// The adapters whose programs the chatbot runs (among ``adapters``).
    private var programs: [ProgramChatAdapter] = []
    var threshold = 0.3
    var defaultResponse = "I am sorry, but I do not understand."
    private var scorer = NaiveBayesScorer(examples: [])
    /// Voice messages (`chat.voice`): read, checked and recognised here, in the worker.
    var voice = VoiceMessages(settings: VoiceSettings(), examples: [])

    /// What a reply needs to reach its sender before their deadline: adapters are given the
    /// time up to this much before it, and a message with less left is not answered.
    static let replyMargin = 0.5

    init(host: WorkerHost) { self.host = host }

    /// Creates the adapters from the settings; throws a readable reason.
    func configure(settings: JSONObject, libraries: [String: String]) throws {
        threshold = settings["confidence_threshold"]?.numberValue?.doubleValue ?? threshold
        defaultResponse = settings["default_response"]?.stringValue ?? defaultResponse
        let allowControl = settings["allow_process_control"]?.boolValue ?? false
        var loaded: [String: LoadedModule] = [:]
        let features = FeaturesAdapter()
        for (index, item) in (settings["logic_adapters"]?.arrayValue ?? []).enumerated() {
            let object: JSONObject = item.stringValue.map { ["type": .string($0)] } ?? item.objectValue ?? [:]
            let type = object["type"]?.stringValue ?? ""
            var adapterSettings = object
            adapterSettings["type"] = nil
            switch type {
            case "features": adapters.append(features)
            case "status": adapters.append(StatusAdapter())
            case "process_control":
                adapters.append(ProcessControlAdapter(allowed: allowControl) { [host] action, name, message in
                    host.emitJSON("chat.command", ["action": .string(action), "name": .string(name), "message": .string(message)])
                })
            case "latest_value":
                let values = adapterSettings["values"]?.arrayValue?.compactMap { value -> LatestValueAdapter.Value? in
                    guard let name = value["name"]?.stringValue, let event = value["event"]?.stringValue, let field = value["field"]?.stringValue else { return nil }
                    return LatestValueAdapter.Value(name: name, event: event, field: field)
                } ?? LatestValueAdapter.hostValues
                adapters.append(LatestValueAdapter(values: values) { [host] sql, params in try host.queryRows(sql, params) })
            case "llm":
                do {
                    adapters.append(LanguageModelAdapter(settings: try LanguageModelSettings(adapterSettings), host: host))
                } catch {
                    throw ChatError("logic_adapters/\(index): \(error)")
                }
            case "rest":
                guard let text = adapterSettings["url"]?.stringValue, let url = URL(string: text) else {
                    throw ChatError("logic_adapters/\(index): a rest adapter needs a \"url\"")
                }
                adapters.append(RestAdapter(url: url, name: adapterSettings["name"]?.stringValue,
                                            timeout: Saturating.seconds(adapterSettings["timeout"]?.numberValue?.doubleValue ?? 5),
                                            // Validated to 0...10; a negative count would make an empty range trap.
                                            retries: min(max(0, adapterSettings["retries"]?.numberValue?.intValue ?? 1), 10)))
            default:
                let parts = type.split(separator: ".", maxSplits: 1).map(String.init)
                guard parts.count == 2, let path = libraries[parts[0]] else {
                    throw ChatError("logic_adapters/\(index): \"\(type)\" is neither a built-in adapter nor <module>.<adapter> of an enabled module")
                }
                if ModuleManifest.isProgramManifest(path) {
                    adapters.append(try programAdapter(type, path: path, module: parts[0], adapter: parts[1], settings: adapterSettings, index: index))
                    continue
                }
                let module: LoadedModule
                if let already = loaded[parts[0]] {
                    module = already
                } else {
                    do { module = try ModuleLoader.load(path: path, module: parts[0]) } catch { throw ChatError("\(error)") }
                    loaded[parts[0]] = module
                }
                guard let declared = module.manifest.processType(parts[1]), declared.kind == "logic_adapter" else {
                    throw ChatError("logic_adapters/\(index): module \(parts[0]) has no logic adapter \"\(parts[1])\"")
                }
                adapters.append(try ModuleChatAdapter(name: type, type: declared, module: module, settings: adapterSettings, host: host.apiPointer))
            }
        }
        features.adapters = adapters
        programs = adapters.compactMap { $0 as? ProgramChatAdapter }
        // Within the worker's own start limit (30 s): slower programs go on starting after.
        ProgramChatAdapter.awaitReady(programs, until: ProgramChatAdapter.now() + 20)
        scorer = NaiveBayesScorer(examples: adapters.map(\.examples))
        // A spoken process command is confirmed by voice too.
        let answers = adapters.contains { ($0 as? ProcessControlAdapter)?.allowed == true } ? ProcessControlAdapter.spokenAnswers : []
        voice = VoiceMessages(settings: VoiceSettings(settings), examples: adapters.flatMap(\.examples) + answers)
    }

    /// A `jsonl/1` module's adapter: its manifest read as data, its program started.
    private func programAdapter(_ name: String, path: String, module: String, adapter: String, settings: JSONObject, index: Int) throws -> ProgramChatAdapter {
        let manifest: ModuleManifest
        do { manifest = try ModuleManifest(programManifest: path, module: module) } catch { throw ChatError("\(error)") }
        guard let declared = manifest.processType(adapter), declared.kind == "logic_adapter" else {
            throw ChatError("logic_adapters/\(index): module \(module) has no logic adapter \"\(adapter)\"")
        }
        return try ProgramChatAdapter(name: name, type: declared, manifest: manifest, settings: settings, host: host)
    }

    /// Answers messages until asked to stop. With program adapters it comes back at least
    /// every quarter of a second (sooner while one has lines waiting) to read them, write to
    /// them and start again those that ended.
    func run() {
        var event = agent_event()
        defer { ProgramChatAdapter.stopAll(programs) }
        var expired = 0
        // With a watchdog, a heartbeat at least three times within it while idle: a chatbot that
        // waited for messages without one was killed every few seconds for "no heartbeat".
        let beat: Int64 = host.api.watchdog_ms > 0 ? max(host.api.watchdog_ms / 3, 10) : -1
        while true {
            var wait: Int64 = programs.isEmpty ? -1 : programs.contains(where: \.needsService) ? 20 : 250
            if beat > 0 {
                wait = wait < 0 ? beat : min(wait, beat)
                host.api.heartbeat!(host.api.host_ctx)
            }
            let status = withUnsafeMutablePointer(to: &event) { host.api.next_event!(host.api.host_ctx, wait, $0) }
            for program in programs { program.service() }
            if status == Int32(AGENT_STOPPED) { return }
            guard status == Int32(AGENT_OK) else { continue }
            let type = String(decoding: UnsafeRawBufferPointer(start: event.type, count: event.type_len), as: UTF8.self)
            if type == "chat.voice" {
                answerVoice(UnsafeRawBufferPointer(start: event.payload, count: event.payload_len))
                continue
            }
            if type != "chat.message" {
                // An event a jsonl/1 adapter subscribed to (the chatbot subscribed for it).
                for program in programs where program.subscribes.contains(type) { program.deliver(event) }
                continue
            }
            guard let payload = try? JSONValue.parse(UnsafeRawBufferPointer(start: event.payload, count: event.payload_len)) else { continue }
            let message = ChatMessage(id: payload["id"]?.stringValue ?? "", conversation: payload["conversation"]?.stringValue ?? "default",
                                      text: payload["text"]?.stringValue ?? "", processes: payload["processes"]?.arrayValue ?? [],
                                      context: payload["context"], adapter: payload["adapter"]?.stringValue, caller: payload["caller"],
                                      purpose: payload["purpose"]?.stringValue, deadline: payload["deadline"]?.numberValue?.doubleValue)
            // Its sender stopped waiting while it was queued: answering it would only delay the next.
            if let deadline = message.deadline, ProgramChatAdapter.now() >= deadline - Self.replyMargin {
                expired += 1
                continue
            }
            if expired > 0 {
                host.sendText(.log, level: JSONLinesFrame.Message.Level.warning.number,
                              "the chatbot left \(expired) message(s) unanswered: their senders had stopped waiting (30 s) while they were queued behind slower answers")
                expired = 0
            }
            host.emitJSON("chat.reply", answer(message))
        }
    }

    /// The reply to one message: the most confident adapter's answer, or the default response.
    /// Program adapters are asked first, all at once, and awaited together while the others
    /// score it.
    func answer(_ message: ChatMessage) -> JSONValue {
        var reply: JSONObject = ["id": .string(message.id), "conversation": .string(message.conversation)]
        if let name = message.adapter {
            guard let adapter = adapters.first(where: { $0.name == name }) else {
                reply["text"] = .string("no logic adapter \"\(name)\" in this chatbot")
                reply["error"] = true
                return .object(reply)
            }
            reply["text"] = .string(adapter.respond(to: message))
            reply["adapter"] = .string(adapter.name)
            // Why the model gave no answer (the text says so to a person; the relay's summary
            // falls back on this).
            if let model = adapter as? LanguageModelAdapter, let failure = model.failure { reply["failed"] = .string(failure) }
            return .object(reply)
        }
        let deadline = min(ProgramChatAdapter.now() + ProgramChatAdapter.answerTimeout, (message.deadline ?? .infinity) - Self.replyMargin)
        for program in programs { program.ask(message, until: deadline) }
        let scored = scorer.scores(message.text)
        var confidences = adapters.enumerated().map { index, adapter in
            adapter is ProgramChatAdapter ? 0 : adapter.confidence(for: message) ?? scored[index]
        }
        ProgramChatAdapter.collect(programs, until: deadline)
        var best: (index: Int, confidence: Double)?
        for (index, adapter) in adapters.enumerated() {
            if let program = adapter as? ProgramChatAdapter { confidences[index] = program.answered?.confidence ?? 0 }
            if confidences[index] > (best?.confidence ?? -1) { best = (index, confidences[index]) }
        }
        if let best, best.confidence >= threshold {
            let adapter = adapters[best.index]
            reply["text"] = .string(adapter.respond(to: message))
            reply["adapter"] = .string(adapter.name)
            reply["confidence"] = .number(JSONNumber((best.confidence * 1000).rounded() / 1000))
        } else {
            var text = defaultResponse
            for case let rest as RestAdapter in adapters {
                if let failure = rest.failure { text += " (\(failure).)" }
            }
            reply["text"] = .string(text)
            reply["confidence"] = .number(JSONNumber(((best?.confidence ?? 0) * 1000).rounded() / 1000))
        }
        return .object(reply)
    }
}
