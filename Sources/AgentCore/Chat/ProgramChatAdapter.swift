import AgentModuleABI
import Foundation
import JSONSchema

/// A logic adapter from a `jsonl/1` module: its program runs as a child of the chatbot's
/// worker; each message is written as `{"chat": {"message", "context", "id"}}` and answered by one
/// `{"answer": {"confidence", "text", "id"}}` (the id echoed, or left out: then answers are taken
/// in order), whose confidence competes with the other adapters'.
/// A program that does not answer in time, or is gone, answers nothing (confidence 0).
final class ProgramChatAdapter: ChatAdapter {
    let name: String
    let summary: String
    let examples: [String]
    /// The event types its manifest subscribes it to, handed over as `event` frames.
    let subscribes: Set<String>
    private let child: ProgramChild
    private let host: WorkerHost
    private var reader: JSONLinesReader
    /// Frames read and not yet taken.
    private var read: [JSONLinesFrame] = []
    private var closed = false
    /// The answer to the message last asked about.
    private var last: (message: String, text: String)?
    /// Messages written whose answer has not come: one that timed out stays owed, so that its
    /// late answer is not taken for the next message's (for a program that does not echo ids,
    /// answers are taken in order).
    private var owed = 0
    /// The id of the last `chat` frame written; an answer that echoes another id is stale.
    private var chatID = 0
    /// How long a program may take to say ready, and to answer a message.
    static let readyTimeout = 30.0
    static let answerTimeout = 10.0

    init(name: String, type: ModuleManifest.ProcessType, manifest: ModuleManifest, settings: JSONObject, host: WorkerHost) throws {
        self.name = name
        self.host = host
        summary = type.description
        examples = type.usageExamples
        subscribes = Set(type.subscribes)
        do {
            child = try ProgramChild.start(command: type.command ?? [], directory: manifest.directory ?? ".")
        } catch {
            throw ChatError("adapter \(name): \(error)")
        }
        reader = JSONLinesReader(fd: child.output, limit: ProgramBridge.lineLimit)
        write(.start(JSONLinesFrame.Start(settings: .object(settings), process: name, type: type.type)))
        let deadline = Date().timeIntervalSince1970 + Self.readyTimeout
        while true {
            guard let frame = next(until: deadline) else {
                throw ChatError("adapter \(name): its program did not say {\"ready\": true} within \(Int(Self.readyTimeout)) s")
            }
            if case .ready = frame { break }
        }
    }

    func confidence(for message: ChatMessage) -> Double? {
        var context: JSONObject = ["conversation": .string(message.conversation)]
        if let extra = message.context { context["context"] = extra }
        // The sender and their preferences, where a program looks first (the relay sets both).
        context["user"] = message.context?["user"]
        context["preferences"] = message.context?["preferences"]
        last = nil
        dropStaleAnswers()
        chatID += 1
        let id = String(chatID)
        guard !closed, write(.chat(JSONLinesFrame.Chat(message: message.text, context: .object(context), id: id))) else { return 0 }
        owed += 1
        let deadline = Date().timeIntervalSince1970 + Self.answerTimeout
        while let frame = next(until: deadline) {
            if case .answer(let answer) = frame {
                owed = max(0, owed - 1)
                if let echoed = answer.id {
                    // An earlier message's late answer, known by its id.
                    guard echoed == id else { continue }
                    owed = 0
                } else if owed > 0 {
                    // Without ids: an earlier message's late answer; this one's comes after it.
                    continue
                }
                last = (message.text, answer.text)
                return answer.confidence
            }
        }
        log("adapter \(name) did not answer within \(Int(Self.answerTimeout)) s\(closed ? " (its program is gone)" : "")")
        return 0
    }

    /// An event it subscribed to: written, no answer expected (what it says meanwhile is read
    /// with the next answer).
    func deliver(_ event: agent_event) {
        guard !closed else { return }
        write(ProgramBridge.eventFrame(event))
    }

    func respond(to message: ChatMessage) -> String {
        if let last, last.message == message.text { return last.text }
        // Asked to answer without a score (a workflow's chat step naming this adapter).
        _ = confidence(for: message)
        return last?.text ?? ""
    }

    /// Reads what the program wrote while no message waited (a moment at most): the late
    /// answers of messages that timed out, and answers no message asked for, are dropped.
    private func dropStaleAnswers() {
        let deadline = Date().timeIntervalSince1970 + 0.001
        var unasked = 0
        while let frame = next(until: deadline) {
            guard case .answer = frame else { continue }
            if owed > 0 {
                owed -= 1
            } else {
                unasked += 1
            }
        }
        // One line for the lot: a program that writes answers unasked must not fill the log.
        if unasked > 0 { log("adapter \(name): dropped \(unasked) answer(s) no message asked for") }
    }

    /// `{"stop": true}` when the chatbot ends, and a moment (up to a second) for the program to
    /// end; then SIGTERM (it would die with the worker anyway, but not by its own hand).
    func stop() {
        _ = write(.stop)
        close(child.input)
        var status: Int32 = 0
        for _ in 0..<100 {
            if waitpid(child.pid, &status, WNOHANG) != 0 { return }
            usleep(10_000)
        }
        kill(child.pid, SIGTERM)
    }

    @discardableResult
    private func write(_ frame: JSONLinesFrame) -> Bool {
        frame.line.withUnsafeBytes { ProgramChild.writeAll(child.input, $0) }
    }

    /// The next frame that is not a side note (messages go to the agent, events are emitted),
    /// or nil at the deadline or the end of the program's output.
    private func next(until deadline: Double) -> JSONLinesFrame? {
        while true {
            while !read.isEmpty {
                let frame = read.removeFirst()
                switch frame {
                case .message(let message): host.sendText(.message, level: message.level.number, message.text)
                case .alert(let text): host.sendText(.message, level: JSONLinesFrame.Message.Level.warning.number, text)
                case .emit(let emit): host.emitJSON(emit.type, emit.payload)
                case .heartbeat, .state: break
                default: return frame
                }
            }
            guard !closed else { return nil }
            var ready = pollfd(fd: child.output, events: Int16(POLLIN), revents: 0)
            let remaining = deadline - Date().timeIntervalSince1970
            guard remaining > 0, poll(&ready, 1, Saturating.pollTimeout(remaining)) > 0 else { return nil }
            closed = !reader.read { item in
                guard case .line(let bytes) = item else {
                    log("adapter \(name): refused a line of its program over \(ProgramBridge.lineLimit) bytes")
                    return
                }
                guard !bytes.isEmpty else { return }
                do throws(JSONLinesError) {
                    read.append(try JSONLinesFrame(line: bytes))
                } catch {
                    log("adapter \(name): refused a line of its program: \(error)")
                }
            }
        }
    }

    private func log(_ text: String) {
        host.sendText(.log, level: JSONLinesFrame.Message.Level.warning.number, text)
    }
}
