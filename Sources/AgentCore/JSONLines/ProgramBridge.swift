import AgentModuleABI
import Foundation
import JSONSchema
import Synchronization

/// A `jsonl/1` module's process, run by its worker: the worker starts the program as its child
/// and translates between its lines and the worker protocol the supervisor speaks, so that
/// nothing else in the runtime knows which kind of module a process came from. Emits go into
/// the channel (its emit ring: when the supervisor's queue is full the channel blocks, this
/// bridge stops reading, and the program blocks on its stdout — back-pressure by `when_full`),
/// heartbeats to the watchdog, `ready` ends the start timeout, state is saved like a Swift
/// process's, events go to a monitor's stdin, task runs go to a task handler's.
// @unchecked: the program's stdin is written under `writeLock`; the rest is set before the
// threads start or guarded by its own Mutex.
final class ProgramBridge: @unchecked Sendable {
    let host: WorkerHost
    let child: ProgramChild
    let process: String
    let kind: String
    /// The longest line the program may write (bytes, newline not counted).
    static let lineLimit = 1 << 20
    private let writeLock = NSLock()
    /// Whether the `start` frame was written (under `writeLock`); what the channel's reader
    /// thread hands over before it (a run sent at once) waits in `early`, so that the program
    /// always reads `start` first.
    private var started = false
    private var early: [UInt8] = []
    private let readySent = Atomic<Bool>(false)
    /// The last `{"error": {"message"}}` without an id: the program's own failure.
    let lastError = Mutex<String?>(nil)
    let problems: ProtocolProblems
    /// A task handler's runs, by id (see ProgramBridge+Tasks).
    let runs = Mutex<TaskRuns>(TaskRuns())
    /// Set once the program has ended (and been reaped): the reader then stops when nothing is
    /// left to read, though a child of the program may still hold its stdout open.
    let programEnded = Atomic<Bool>(false)
    /// How the program ended, once it has.
    let endStatus = Mutex<(code: Int32?, signal: Int32?)>((nil, nil))

    init(host: WorkerHost, child: ProgramChild, process: String, kind: String) {
        self.host = host
        self.child = child
        self.process = process
        self.kind = kind
        problems = ProtocolProblems(host: host)
    }

    // MARK: To the program

    /// Writes one line to the program's stdin. False when it no longer reads it.
    @discardableResult
    func write(_ frame: JSONLinesFrame) -> Bool {
        var line = frame.line
        writeLock.lock()
        defer { writeLock.unlock() }
        if case .start = frame {
            started = true
            line += early
            early = []
        } else if !started {
            early += line
            return true
        }
        return line.withUnsafeBytes { ProgramChild.writeAll(child.input, $0) }
    }

    /// Writes several frames' lines at once (a batch of events); none once the stop is asked
    /// (the flag is set before the stop frame is written under the same lock: nothing follows it).
    private func write(lines: [UInt8]) -> Bool {
        writeLock.lock()
        defer { writeLock.unlock() }
        if host.isStopping { return false }
        return lines.withUnsafeBytes { ProgramChild.writeAll(child.input, $0) }
    }

    /// The stop: `{"stop": true}`, then SIGTERM after `grace` seconds if the program is still
    /// there (the supervisor kills the whole group at its stop timeout). A writer blocked on a
    /// program that does not read its stdin holds the lock: then SIGTERM at once.
    func stop(grace: Double) {
        let line = JSONLinesFrame.stop.line
        if writeLock.lock(before: Date(timeIntervalSinceNow: 0.5)) {
            _ = line.withUnsafeBytes { ProgramChild.writeAll(child.input, $0) }
            writeLock.unlock()
        } else {
            kill(child.pid, SIGTERM)
            return
        }
        let pid = child.pid
        DispatchQueue.global().asyncAfter(deadline: .now() + Saturating.seconds(grace)) { [self] in
            // Still this worker's child (not reaped): a pid is not reused before its reaping.
            if !programEnded.load(ordering: .acquiring) { kill(pid, SIGTERM) }
        }
    }

    /// A monitor's events: taken from the host (its delivery ring and socket) and written to
    /// the program's stdin, a batch per write. Blocks while the program does not read: the
    /// supervisor's queue then fills and `when_full` applies. Returns at the stop.
    func pumpEvents() {
        var events = [agent_event](repeating: agent_event(), count: 64)
        var lines: [UInt8] = []
        while true {
            var count = 0
            let status = events.withUnsafeMutableBufferPointer { buffer in
                host.api.next_events!(host.api.host_ctx, -1, buffer.baseAddress, buffer.count, &count)
            }
            // Nothing follows the stop frame.
            if status == Int32(AGENT_STOPPED) || host.isStopping { return }
            guard status == Int32(AGENT_OK) else { continue }
            lines.removeAll(keepingCapacity: true)
            for event in events.prefix(count) { lines += Self.eventFrame(event).line }
            if !lines.isEmpty, !write(lines: lines) { return }
        }
    }

    /// An event as the program reads it: the payload's JSON, or its text when it is not JSON.
    static func eventFrame(_ event: agent_event) -> JSONLinesFrame {
        let payloadBytes = UnsafeRawBufferPointer(start: event.payload, count: event.payload == nil ? 0 : event.payload_len)
        let payload: JSONValue = payloadBytes.isEmpty ? .null : ((try? JSONValue.parse(payloadBytes)) ?? .string(String(decoding: payloadBytes, as: UTF8.self)))
        return .event(JSONLinesFrame.Event(
            type: String(decoding: UnsafeRawBufferPointer(start: event.type, count: event.type_len), as: UTF8.self),
            source: String(decoding: UnsafeRawBufferPointer(start: event.source, count: event.source_len), as: UTF8.self),
            time: Double(event.time_ns) / 1e9, payload: payload))
    }

    // MARK: From the program

    /// Reads the program's stdout until it closes it, or until the program has ended and
    /// nothing is left (an orphan of it holding the pipe open must not hide its end), handling
    /// each line. The caller's thread.
    func readLines() {
        var reader = JSONLinesReader(fd: child.output, limit: Self.lineLimit)
        defer { reader.deallocate() }
        // Reads once the program has ended: what it left in the pipe takes a few, and an
        // orphan of it writing on must not keep the worker up.
        var readsAfterEnd = 64
        while true {
            let ended = programEnded.load(ordering: .acquiring)
            var ready = pollfd(fd: child.output, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, ended ? 0 : 100)
            if polled < 0, errno == EINTR { continue }
            if polled == 0 {
                if ended { return }
                continue
            }
            if ended {
                readsAfterEnd -= 1
                if readsAfterEnd < 0 { return }
            }
            guard polled > 0, readOnce(&reader) else { return }
        }
    }

    /// One read of the program's stdout, its lines handled. False at its end.
    private func readOnce(_ reader: inout JSONLinesReader) -> Bool {
        reader.read({ item in
            switch item {
            case .line(let bytes):
                guard !bytes.isEmpty else { return }
                do throws(JSONLinesError) {
                    handle(try JSONLinesFrame(line: bytes))
                } catch {
                    problems.refused(error)
                }
            case .tooLong(let length, let whole, let head):
                let found = whole ? "found one of \(length) bytes; it was skipped"
                    : "found one of more (\(length) bytes without a newline so far); it is skipped up to its newline"
                problems.refused(JSONLinesError(.tooLong, "expected a line of at most \(Self.lineLimit) bytes, \(found)"))
                failRun(ofOverlongLine: head, length: length, whole: whole)
            }
        })
    }

    /// One frame from the program.
    func handle(_ frame: JSONLinesFrame) {
        switch frame {
        case .ready:
            if !readySent.exchange(true, ordering: .acquiringAndReleasing) {
                host.channel.send(.ready, body: WorkerMain.readyFrameBody)
                WorkerMemory.releaseStartPagesLater()
            }
        case .emit(let emit):
            emitEvent(emit)
        case .message(let message):
            send(message.text, level: message.level)
        case .alert(let text):
            send(text, level: .warning)
        case .heartbeat:
            _ = host.api.heartbeat!(host.api.host_ctx)
            heartbeatRuns()
        case .state(let state):
            saveState(state)
        case .progress(let progress):
            runProgress(progress)
        case .result(let result):
            endRun(result.id, succeeded: true, data: result.output.serializedBytes())
        case .error(let failure):
            if let id = failure.id {
                endRun(id, succeeded: false, data: Array(failure.message.utf8))
            } else {
                lastError.withLock { $0 = failure.message }
                log(failure.message, level: .error)
            }
        case .answer:
            problems.refused(JSONLinesError(.wrongDirection, at: "/answer", "expected no answer: only a logic adapter answers, when the chatbot asks it (a \(kind) is never asked)"))
        case .start, .event, .chat, .run, .cancel, .stop:
            problems.refused(JSONLinesError(.wrongDirection, at: "/" + frame.name, "expected a frame the program writes (\(JSONLinesFrame.programFrames.sorted().joined(separator: ", "))), found \"\(frame.name)\", which only the runtime writes"))
        }
    }

    private func emitEvent(_ emit: JSONLinesFrame.Emit) {
        // Refused once the stop is asked, as a library module's emit is.
        guard !host.isStopping else { return }
        let type = Array(emit.type.utf8)
        let payload = emit.payload.serializedBytes()
        let time = WorkerHost.nowNanoseconds()
        host.channel.send { buffer in
            type.withUnsafeBytes { t in payload.withUnsafeBytes { p in EventFrame.appendEmitted(type: t, timeNanoseconds: time, payload: p, to: buffer) } }
        }
    }

    func send(_ text: String, level: JSONLinesFrame.Message.Level) {
        host.sendText(.message, level: level.number, text)
    }

    func log(_ text: String, level: JSONLinesFrame.Message.Level) {
        host.sendText(.log, level: level.number, text)
    }

    private func saveState(_ state: JSONValue) {
        let bytes = state.serializedBytes()
        let status = bytes.withUnsafeBufferPointer { host.api.save_state!(host.api.host_ctx, $0.baseAddress, $0.count) }
        if status == Int32(AGENT_STORE_UNAVAILABLE) {
            log("the state was not stored (the store cannot write now); it is kept for this run, save it again later", level: .warning)
        } else if status != Int32(AGENT_OK) {
            log("the state could not be saved", level: .error)
        }
    }

    /// The state last saved (nil: none), for the start frame: its JSON, or its text when a
    /// library version of the module saved something else.
    func loadState() -> JSONValue? {
        var data: UnsafePointer<UInt8>?
        var length = 0
        guard host.api.load_state!(host.api.host_ctx, &data, &length) == Int32(AGENT_OK), let data else { return nil }
        let bytes = UnsafeRawBufferPointer(start: data, count: length)
        return (try? JSONValue.parse(bytes)) ?? .string(String(decoding: bytes, as: UTF8.self))
    }
}
