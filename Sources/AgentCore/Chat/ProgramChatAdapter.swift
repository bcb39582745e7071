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
    /// The message asked about and not yet answered, with whether it was given the whole
    /// ``answerTimeout`` (a miss counts towards a restart only then).
    var asking: (id: String, text: String, wholeTime: Bool)?
    /// The answer to the message last asked about.
    var answered: (message: String, confidence: Double, text: String)?
    /// Chat frames written whose answer has not come: a late answer is not taken for the next
    /// message's (for a program that does not echo ids, answers are taken in order).
    var owed = 0
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
    /// Why its program last ended (or could not start).
    var lastEnd: String?
    /// Its program said ready once: ends are logged from then on (before, the chatbot's start
    /// fails saying why).
    var hasBeenReady = false
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
        try startFirst()
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
        guard phase == .ready, let child else { return false }
        var context: JSONObject = ["conversation": .string(message.conversation)]
        if let extra = message.context { context["context"] = extra }
        // The sender and their preferences, where a program looks first (the relay sets both).
        context["user"] = message.context?["user"]
        context["preferences"] = message.context?["preferences"]
        chatID += 1
        let id = String(chatID)
        outbox.send(JSONLinesFrame.chat(JSONLinesFrame.Chat(message: message.text, context: .object(context), id: id)).line)
        owed += 1
        asking = (id, message.text, deadline - Self.now() >= Self.answerTimeout - 0.001)
        if outbox.flush(to: child.input) == .closed { programEnded(because: "closed its stdin") }
        return asking != nil
    }

    /// Waits for the answers of every adapter in `programs` that was asked, reading each one's
    /// output as it comes and writing what waits for it, until all have answered or `deadline`.
    static func collect(_ programs: [ProgramChatAdapter], until deadline: Double) {
        while true {
            let waiting = programs.filter { $0.asking != nil }
            guard !waiting.isEmpty else { return }
            let remaining = deadline - now()
            guard remaining > 0 else { break }
            var descriptors = waiting.flatMap(\.pollDescriptors)
            _ = poll(&descriptors, nfds_t(descriptors.count), Saturating.pollTimeout(remaining))
            for program in waiting { program.service() }
        }
        for program in programs where program.asking != nil { program.missed() }
    }

    func confidence(for message: ChatMessage) -> Double? {
        let deadline = min(Self.now() + Self.answerTimeout, message.deadline ?? .infinity)
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
        log("adapter \(name) did not answer in time (at most \(Int(Self.answerTimeout)) s a message)")
        guard asking.wholeTime else { return }
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
            guard owed > 0 else {
                unasked += 1
                return
            }
            owed -= 1
            guard let asking else { return }
            if let echoed = answer.id {
                // An earlier message's late answer, known by its id.
                guard echoed == asking.id else { return }
                owed = 0
            } else if owed > 0 {
                // Without ids: an earlier message's late answer; this one's comes after it.
                return
            }
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
