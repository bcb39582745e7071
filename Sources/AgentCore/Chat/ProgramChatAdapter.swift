import AgentModuleABI
import Foundation
import JSONSchema

/// A logic adapter from a `jsonl/1` module: its program runs as a child of the chatbot's
/// worker; each message is written as `{"chat": {"message", "context", "id"}}` and answered by one
/// `{"answer": {"confidence", "text", "id"}}` (the id echoed, or left out: then answers are taken
/// in order), whose confidence competes with the other adapters'.
///
/// The chatbot never waits on one program: every program adapter is asked at once and their
/// answers are awaited together until one deadline (``collect(_:until:)``); what it writes to a
/// program waits in a ``ProgramOutbox`` while the program does not read. A program that does
/// not answer in time answers nothing (confidence 0); one that ends, or misses
/// ``missesBeforeRestart`` messages in a row, is started again after a pause that doubles up to
/// a minute (see `ProgramChatAdapter+Lifecycle.swift`).
final class ProgramChatAdapter: ChatAdapter {
    let name: String
    let summary: String
    let examples: [String]
    /// The event types its manifest subscribes it to, handed over as `event` frames.
    let subscribes: Set<String>
    let host: WorkerHost
    /// What starts its program, and the `start` frame each start of it is given.
    let command: [String]
    let directory: String
    let startLine: [UInt8]

    /// Where its program is: running and answering, starting (until its `ready`, or the
    /// instant it is given up), or down until the instant it is started again.
    enum Phase: Equatable {
        case ready
        case starting(until: Double)
        case down(until: Double)
    }
    var phase: Phase = .down(until: 0)
    var child: ProgramChild?
    var reader: JSONLinesReader?
    var outbox = ProgramOutbox()
    /// The message asked about and not yet answered, with when it was asked (a miss counts
    /// towards a restart only when the program had the whole ``answerTimeout``).
    var asking: (id: String, text: String, at: Double)?
    /// The answer to the message last asked about.
    var answered: (message: String, confidence: Double, text: String)?
    /// The ids of the chat frames written whose answer has not come, oldest first (at most
    /// ``maximumOutstanding``): a late answer is known by its id, or, from a program that
    /// leaves the id out, taken for the oldest; an answer naming none of them is stray, and
    /// takes nobody's place.
    var outstanding: [String] = []
    static let maximumOutstanding = 16
    /// The id of the last `chat` frame written; an answer that echoes another id is stale.
    var chatID = 0
    /// Messages in a row it was given the whole time for and did not answer.
    var misses = 0
    /// Ends (or starts that failed) since it last answered: the pause before the next start.
    var failures = 0
    /// Answers nobody asked for, and lines refused (with the first's reason), since they
    /// were last logged.
    var unasked = 0
    var refusedCount = 0
    var firstRefusal: String?
    /// Its first start was made: what goes wrong from then on is logged (a first start that
    /// fails fails the chatbot's, saying why).
    var firstStartMade = false
    /// One log line a second at most for what a program does wrong over and over.
    var complaints = RateAllowance(burst: 1, perSecond: 1, now: 0)

    /// How long a program may take to say ready, and to answer a message.
    static let readyTimeout = 30.0
    static let answerTimeout = 10.0
    /// Messages missed in a row before its program is taken for hung and started again.
    static let missesBeforeRestart = 2

    init(name: String, type: ModuleManifest.ProcessType, manifest: ModuleManifest, settings: JSONObject, host: WorkerHost) throws {
        self.name = name
        self.host = host
        summary = type.description
        examples = type.usageExamples
        subscribes = Set(type.subscribes)
        command = type.command ?? []
        directory = manifest.directory ?? "."
        startLine = JSONLinesFrame.start(JSONLinesFrame.Start(settings: .object(settings), process: name, type: type.type)).line
        // Only a program that cannot be started fails the chatbot's start (its manifest is
        // wrong); one that ends or is slow to say ready is started again, as later.
        if let problem = launch() { throw ChatError("adapter \(name): \(problem)") }
        firstStartMade = true
    }

    /// The monotonic clock, in seconds (the relay's message deadlines are on it too).
    static func now() -> Double { ChatMessage.now() }

    // MARK: Asking

    /// Writes `message` to the program, without waiting; false when it is not there to ask
    /// (starting, or down). `deadline`: when the answer is given up.
    @discardableResult
    func ask(_ message: ChatMessage, until deadline: Double) -> Bool {
        answered = nil
        asking = nil
        service()
        // A moment left is no time to answer in: not asked, not counted a miss.
        guard phase == .ready, let child, deadline - Self.now() >= 0.5 else { return false }
        var context: JSONObject = ["conversation": .string(message.conversation)]
        if let extra = message.context { context["context"] = extra }
        // The sender and their preferences, where a program looks first (the relay sets both).
        context["user"] = message.context?["user"]
        context["preferences"] = message.context?["preferences"]
        chatID += 1
        let id = String(chatID)
        outbox.send(JSONLinesFrame.chat(JSONLinesFrame.Chat(message: message.text, context: .object(context), id: id)).line)
        outstanding.append(id)
        if outstanding.count > Self.maximumOutstanding { outstanding.removeFirst() }
        asking = (id, message.text, Self.now())
        if outbox.flush(to: child.input) == .closed { programEnded(because: "closed its stdin") }
        return asking != nil
    }

    /// Waits for the answers of every adapter in `programs` that was asked, reading each one's
    /// output as it comes and writing what waits for it, until all have answered or `deadline`.
    /// What each wrote is read once more at the deadline: the other adapters may have taken
    /// the time (a slow `rest` service), and an answer waiting in the pipe is an answer.
    static func collect(_ programs: [ProgramChatAdapter], until deadline: Double) {
        while true {
            let waiting = programs.filter { $0.asking != nil }
            guard !waiting.isEmpty else { return }
            let remaining = deadline - now()
            if remaining > 0 {
                var descriptors = waiting.flatMap(\.pollDescriptors)
                _ = poll(&descriptors, nfds_t(descriptors.count), Saturating.pollTimeout(remaining))
            }
            for program in waiting { program.service() }
            if remaining <= 0 { break }
        }
        for program in programs where program.asking != nil { program.missed() }
    }

    func confidence(for message: ChatMessage) -> Double? {
        let deadline = min(Self.now() + Self.answerTimeout, (message.deadline ?? .infinity) - ChatbotProcess.replyMargin)
        if ask(message, until: deadline) { Self.collect([self], until: deadline) }
        return answered?.confidence ?? 0
    }

    func respond(to message: ChatMessage) -> String {
        if let answered, answered.message == message.text { return answered.text }
        // Asked to answer without a score (a workflow's chat step naming this adapter).
        _ = confidence(for: message)
        return answered?.text ?? ""
    }

    /// An event it subscribed to: queued for its program, no answer expected (dropped, oldest
    /// first, while the program reads too slowly).
    func deliver(_ event: agent_event) {
        guard child != nil else { return }
        outbox.offer(ProgramBridge.eventFrame(event).line)
        flush()
    }

    /// Whether the chatbot should come back soon even with no message: something waits to be
    /// written, or the program is starting.
    var needsService: Bool {
        if case .starting = phase { return true }
        return !outbox.isEmpty
    }

    /// What to wait for: its output, and its stdin when something waits to be written.
    var pollDescriptors: [pollfd] {
        guard let child else { return [] }
        var descriptors = [pollfd(fd: child.output, events: Int16(POLLIN), revents: 0)]
        if !outbox.isEmpty { descriptors.append(pollfd(fd: child.input, events: Int16(POLLOUT), revents: 0)) }
        return descriptors
    }

    /// The message asked about got no answer in time.
    private func missed() {
        guard let asking else { return }
        self.asking = nil
        let waited = Self.now() - asking.at
        log("adapter \(name) did not answer in time (it had \(String(format: "%.1f", waited)) s; at most \(Int(Self.answerTimeout)) s a message)")
        guard waited >= Self.answerTimeout - 0.05 else { return }
        misses += 1
        if misses >= Self.missesBeforeRestart {
            programEnded(because: "answered none of the last \(misses) messages in \(Int(Self.answerTimeout)) s", killing: true)
        }
    }

    /// A frame that is not a side note (those are handled where they are read).
    func take(_ frame: JSONLinesFrame) {
        switch frame {
        case .ready:
            guard case .starting = phase else { return }
            phase = .ready
            if failures > 0 { log("adapter \(name): its program is ready again") }
        case .answer(let answer):
            let id: String
            if let echoed = answer.id {
                guard let index = outstanding.firstIndex(of: echoed) else {
                    unasked += 1
                    return
                }
                id = outstanding.remove(at: index)
            } else {
                guard !outstanding.isEmpty else {
                    unasked += 1
                    return
                }
                id = outstanding.removeFirst()
            }
            // Else an earlier message's late answer.
            guard let asking, asking.id == id else { return }
            answered = (asking.text, answer.confidence, answer.text)
            self.asking = nil
            misses = 0
            failures = 0
        default:
            break
        }
    }

    func log(_ text: String) {
        host.sendText(.log, level: JSONLinesFrame.Message.Level.warning.number, text)
    }
}
