import AgentModuleABI
import CAgentSystem
import Foundation
import Synchronization
import JSONSchema

/// The host side of the module ABI inside a worker: implements `agent_host_api` on top of
/// the channel to the supervisor.
// @unchecked: the module's C callbacks with their raw arguments and the load_state buffer are
// not Sendable; each is reached under the lock named beside it, on the hot path of every emit.
final class WorkerHost: @unchecked Sendable {
    let channel: WorkerChannel
    let lock = NSCondition()
    /// Delivered events that came on the socket, from the reader thread to the process's
    /// receives (all of them without a ring; with one, only frames too big for it).
    let inbox = EventInbox()
    /// The delivery ring, when the supervisor gave one (receiving side only).
    let ringReceiver: RingReceiver?
    /// One receive at a time (the receiving side of the inbox is not shared).
    let receiveLock = NSLock()
    private(set) var stopRequested = false
    /// Set by `wake_events_wait`: the next (or current) `wait_events` returns at once.
    var eventsWaitWoken = false
    /// `stopRequested` for readers that do not wait (every emit asks): no lock.
    private let stopFlag = Atomic<Bool>(false)
    private var stopHandler: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?
    private var stopHandlerArgument: UnsafeMutableRawPointer?
    /// The module's event notifier, called with `notifierLock` held, so that once
    /// `set_event_notifier` returns no call to the previous one is still running.
    private var eventNotifier: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?
    private var eventNotifierArgument: UnsafeMutableRawPointer?
    private let notifierLock = NSLock()
    private var stateReply: (status: UInt8, bytes: [UInt8])?
    private var saveReply: UInt8?
    /// Queries on their way, by id: nil until the answer (`queryResult` with the same id) came.
    /// Several handlers of a task executor query at once, each waiting for its own answer.
    private var pendingQueries: [UInt64: (status: UInt8, bytes: [UInt8])?] = [:]
    private var nextQueryID: UInt64 = 0
    /// The answers handed out by `query`, one per calling thread (see ``ThreadAnswer``).
    private let queryAnswers = ThreadAnswer()
    private var memoryReply: (status: UInt8, bytes: [UInt8])?
    /// One memory request at a time (replies matched by order).
    private let memoryLock = NSLock()
    /// The answers handed out by `memory`, one per calling thread: a task executor's handlers
    /// call it from several threads, and each reads its answer after the call returns.
    private var memoryAnswers: [UInt: UnsafeMutableRawBufferPointer] = [:]

    /// Storage behind the pointers handed out by load_state (valid until the next call, as the
    /// header promises).
    private var currentState = UnsafeMutableRawBufferPointer.allocate(byteCount: 0, alignment: 8)

    private(set) var api = agent_host_api()

    /// A task executor's runs going on, by token, and whether each was asked to cancel: a
    /// token is here from its `taskRun` frame until `task_complete` (which therefore ends a
    /// run once).
    let taskRuns = Mutex<[UInt64: Bool]>([:])
    /// Where `taskRun` and `taskCancel` frames go (a task executor's; reader thread).
    var taskFrames: ((FrameKind, UnsafeRawBufferPointer) -> Void)?
    /// Called once when the supervisor asks the worker to stop (a task executor's exit).
    var onStop: (@Sendable () -> Void)?
    /// Holds the frames while an instant's held runs start (a task executor's).
    let completionHold: CompletionHold

    init(channel: WorkerChannel, ring: RingReceiver? = nil) {
        self.channel = channel
        completionHold = CompletionHold(channel: channel)
        ringReceiver = ring
        api.abi_version = AGENT_MODULE_ABI_VERSION
        api.struct_size = UInt32(MemoryLayout<agent_host_api>.size)
        api.host_ctx = Unmanaged.passUnretained(self).toOpaque()
        api.emit = { ctx, type, typeLength, payload, payloadLength in
            guard let type, typeLength > 0, typeLength <= 0xFFFF else { return Int32(AGENT_ERROR) }
            // A frame the supervisor would refuse ended the worker ("protocol error") after an OK.
            guard payload == nil || payloadLength <= FrameCodec.largestPart - typeLength else { return Int32(AGENT_ERROR) }
            // The host outlives every call into it: no retain and release per event.
            return Unmanaged<WorkerHost>.fromOpaque(ctx!)._withUnsafeGuaranteedRef { host in
                if host.isStopping { return Int32(AGENT_STOPPED) }
                let time = WorkerHost.nowNanoseconds()
                host.channel.send { buffer in
                    EventFrame.appendEmitted(
                        type: UnsafeRawBufferPointer(start: type, count: typeLength),
                        timeNanoseconds: time,
                        payload: UnsafeRawBufferPointer(start: payload, count: payload == nil ? 0 : payloadLength),
                        to: buffer)
                }
                return Int32(AGENT_OK)
            }
        }
        api.send_message = { ctx, level, text, length in
            WorkerHost.from(ctx).sendText(.message, level: level, text, length)
            return Int32(AGENT_OK)
        }
        api.log = { ctx, level, text, length in
            WorkerHost.from(ctx).sendText(.log, level: level, text, length)
        }
        api.next_event = { ctx, timeout, out in
            guard let out else { return Int32(AGENT_ERROR) }
            var count = 0
            return WorkerHost.from(ctx).nextEvents(timeoutMilliseconds: timeout, into: out, capacity: 1, count: &count)
        }
        api.next_events = { ctx, timeout, out, capacity, count in
            guard let out, let count, capacity > 0 else { return Int32(AGENT_ERROR) }
            return WorkerHost.from(ctx).nextEvents(timeoutMilliseconds: timeout, into: out, capacity: capacity, count: &count.pointee)
        }
        api.load_state = { ctx, data, length in
            WorkerHost.from(ctx).loadState(data, length)
        }
        api.save_state = { ctx, data, length in
            WorkerHost.from(ctx).saveState(data, length)
        }
        api.heartbeat = { ctx in
            WorkerHost.from(ctx).channel.send(.heartbeat, body: EmptyCollection())
        }
        api.stop_requested = { ctx in
            WorkerHost.from(ctx).isStopping ? 1 : 0
        }
        api.set_stop_handler = { ctx, handler, argument in
            WorkerHost.from(ctx).setStopHandler(handler, argument)
        }
        api.set_event_notifier = { ctx, notify, argument in
            WorkerHost.from(ctx).setEventNotifier(notify, argument)
        }
        api.query = { ctx, sql, sqlLength, params, paramsLength, json, jsonLength in
            let host = WorkerHost.from(ctx)
            let sqlText = sql.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: sqlLength), as: UTF8.self) } ?? ""
            let paramsText = params.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: paramsLength), as: UTF8.self) } ?? "[]"
            return host.query(sql: sqlText, params: paramsText, json, jsonLength)
        }
        api.memory = { ctx, token, request, length, json, jsonLength in
            let bytes = request.map { UnsafeRawBufferPointer(start: $0, count: length) } ?? UnsafeRawBufferPointer(start: nil, count: 0)
            return WorkerHost.from(ctx).memory(token: token, request: bytes, json, jsonLength)
        }
        if Self.offersEventWait {
            api.wait_events = { ctx, timeout in
                WorkerHost.from(ctx).waitForEvents(timeoutMilliseconds: timeout)
            }
            api.wake_events_wait = { ctx in
                WorkerHost.from(ctx).wakeEventsWait()
            }
        }
        api.task_progress = { ctx, token, fraction, message, length in
            // Cut to what a frame holds, as a message is.
            let text = message.map { UnsafeRawBufferPointer(start: $0, count: min(length, FrameCodec.largestPart)) }
                ?? UnsafeRawBufferPointer(start: nil, count: 0)
            WorkerHost.from(ctx).channel.send { TaskFrame.appendProgress(token: token, fraction: fraction.isFinite && fraction >= 0 ? min(1, fraction) : nil, message: text, to: $0) }
            return Int32(AGENT_OK)
        }
        api.task_heartbeat = { ctx, token in
            WorkerHost.from(ctx).channel.send { TaskFrame.append(.taskHeartbeat, token: token, to: $0) }
        }
        api.task_cancelled = { ctx, token in
            WorkerHost.from(ctx).taskRuns.withLock { $0[token] ?? false } ? 1 : 0
        }
        api.task_complete = { ctx, token, status, data, length in
            let host = WorkerHost.from(ctx)
            guard host.taskRuns.withLock({ $0.removeValue(forKey: token) }) != nil else { return Int32(AGENT_ERROR) }
            let bytes = data.map { UnsafeRawBufferPointer(start: $0, count: length) } ?? UnsafeRawBufferPointer(start: nil, count: 0)
            guard bytes.count <= FrameCodec.largestPart else {
                // The run fails, saying why, rather than the worker for a frame too large.
                let reason = Array("the run's \(status == Int32(AGENT_OK) ? "output" : "error") is \(bytes.count) bytes; a worker sends at most \(FrameCodec.maxFrameLength >> 20) MiB at once: return less (a file's path, a summary)".utf8)
                reason.withUnsafeBytes { text in host.channel.send { TaskFrame.appendResult(token: token, succeeded: false, data: text, to: $0) } }
                host.completionHold.completed(token)
                return Int32(AGENT_ERROR)
            }
            host.channel.send { TaskFrame.appendResult(token: token, succeeded: status == Int32(AGENT_OK), data: bytes, to: $0) }
            host.completionHold.completed(token)
            return Int32(AGENT_OK)
        }
    }

    func setWatchdog(milliseconds: Int64) { api.watchdog_ms = milliseconds }

    /// Whether modules may sleep in `wait_events` (`AGENT_WORKER_EVENT_WAIT=0`: not offered,
    /// so that AgentModuleKit's processes run on the cooperative pool, woken through the
    /// reader thread, as before; for comparison).
    private static let offersEventWait = !EnvironmentSwitch.isOff(getenv("AGENT_WORKER_EVENT_WAIT").map { String(cString: $0) })

    /// A stable pointer to the callback table, for module adapters that keep it.
    lazy var apiPointer: UnsafePointer<agent_host_api> = {
        let pointer = UnsafeMutablePointer<agent_host_api>.allocate(capacity: 1)
        pointer.initialize(to: api)
        return UnsafePointer(pointer)
    }()

    /// Emits an event with a JSON payload (host-side code: the chatbot).
    func emitJSON(_ type: String, _ payload: JSONValue) {
        emit(type, bytes: payload.serializedBytes())
    }

    /// Emits an event with a payload of any bytes (a voice reply: JSON, a line feed, a WAV).
    func emit(_ type: String, bytes body: [UInt8]) {
        let typeBytes = Array(type.utf8)
        let time = Self.nowNanoseconds()
        channel.send { buffer in
            typeBytes.withUnsafeBytes { t in
                body.withUnsafeBytes { p in EventFrame.appendEmitted(type: t, timeNanoseconds: time, payload: p, to: buffer) }
            }
        }
    }

    /// Runs a store query through the supervisor; the rows as JSON values.
    /// The request is made from the values as they are (not written as JSON text, read back
    /// and written again, as a module's C call has to be), and the answer read from its frame.
    func queryRows(_ sql: String, _ params: [JSONValue]) throws -> [JSONValue] {
        let body = JSONValue.object(["sql": .string(sql), "params": .array(params)]).serializedBytes()
        guard body.count <= FrameCodec.maxFrameLength - 16 else { throw ChatError("the query is \(body.count) bytes, more than a frame holds") }
        let answer = ask(.query, body) ?? (1, Array("the supervisor is gone".utf8))
        guard answer.status == 0 else { throw ChatError(String(decoding: answer.bytes, as: UTF8.self)) }
        return (try? JSONValue.parse(answer.bytes))?.arrayValue ?? []
    }

    private static func from(_ ctx: UnsafeMutableRawPointer?) -> WorkerHost {
        Unmanaged<WorkerHost>.fromOpaque(ctx!).takeUnretainedValue()
    }

    static func nowNanoseconds() -> Int64 { agent_event_time_ns() }

    var isStopping: Bool { stopFlag.load(ordering: .acquiring) }

    private func sendText(_ kind: FrameKind, level: Int32, _ text: UnsafePointer<CChar>?, _ length: Int) {
        // A text too long for a frame is cut: it ended the worker ("protocol error") before.
        let bytes = text.map { UnsafeRawBufferPointer(start: $0, count: min(length, FrameCodec.largestPart)) } ?? UnsafeRawBufferPointer(start: nil, count: 0)
        channel.send { buffer in
            FrameCodec.appendHeader(kind, bodyLength: 1 + bytes.count, to: buffer)
            buffer.append(UInt8(clamping: max(0, level)))
            buffer.append(bytes)
        }
    }

    /// Sends a message (`.message`) or a log line (`.log`) from host-side code (a `jsonl/1`
    /// program's bridge, the chatbot's program adapters).
    func sendText(_ kind: FrameKind, level: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { sendText(kind, level: level, $0.baseAddress, $0.count) }
        }
    }

    // MARK: Incoming frames (reader thread)

    /// Handles one frame from the supervisor.
    func handle(_ kind: FrameKind, _ body: UnsafeRawBufferPointer) {
        switch kind {
        case .deliver:
            // Published once per read (see publishDeliveries), not per event.
            _ = inbox.collect(body)
            return
        case .deliverRun:
            _ = inbox.collectRun(body)
            return
        default:
            break
        }
        publishDeliveries()
        switch kind {
        case .stateData:
            lock.lock()
            stateReply = (body.first ?? 2, Array(body.dropFirst()))
            lock.broadcast()
            lock.unlock()
        case .stateSaved:
            lock.lock()
            saveReply = body.first ?? 1
            lock.broadcast()
            lock.unlock()
        case .stop:
            requestStop()
        case .wake:
            lock.lock()
            lock.broadcast()
            lock.unlock()
            // A thread asleep on the ring's word whose flag another receive overwrote.
            ringReceiver?.wakeSleeper()
            notifyEvents()
        case .queryResult, .chatToolResult:
            guard let (id, status, bytes) = QueryFrame.parseResult(body) else { break }
            lock.lock()
            // An answer nobody waits for (its caller gave up) is dropped.
            if pendingQueries[id] != nil { pendingQueries[id] = (status, bytes) }
            lock.broadcast()
            lock.unlock()
        case .memoryResult:
            lock.lock()
            memoryReply = (body.first ?? 1, Array(body.dropFirst()))
            lock.broadcast()
            lock.unlock()
        case .taskRun, .taskCancel:
            taskFrames?(kind, body)
        default:
            break
        }
    }

    /// Marks the process as stopping, wakes every waiter and runs the module's stop handler.
    func requestStop() {
        lock.lock()
        let first = !stopRequested
        stopRequested = true
        stopFlag.store(true, ordering: .releasing)
        let handler = stopHandler
        let argument = stopHandlerArgument
        lock.broadcast()
        lock.unlock()
        ringReceiver?.wakeSleeper()
        if first, let handler { handler(argument) }
        if first { notifyEvents() }
        if first { onStop?() }
    }

    func setEventNotifier(_ notify: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?, _ argument: UnsafeMutableRawPointer?) {
        notifierLock.lock()
        eventNotifier = notify
        eventNotifierArgument = argument
        notifierLock.unlock()
    }

    /// Tells the module that events (or the stop) arrived, if it asked to be told.
    private func notifyEvents() {
        notifierLock.lock()
        defer { notifierLock.unlock() }
        eventNotifier?(eventNotifierArgument)
    }

    private func setStopHandler(_ handler: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?, _ argument: UnsafeMutableRawPointer?) {
        lock.lock()
        stopHandler = handler
        stopHandlerArgument = argument
        let already = stopRequested
        lock.unlock()
        if already, let handler { handler(argument) }
    }

    // MARK: Callbacks that wait

    /// Makes what the reader thread collected visible to receives: one lock and at most one
    /// wakeup per read from the socket, whatever the number of events in it. Reader thread.
    func publishDeliveries() {
        guard inbox.hasCollected else { return }
        lock.lock()
        let wasEmpty = inbox.publish()
        // Only a receive waiting on an empty queue needs waking.
        if wasEmpty { lock.broadcast() }
        lock.unlock()
        if wasEmpty {
            ringReceiver?.wakeSleeper()
            notifyEvents()
        }
    }

    /// next_event (capacity 1) and next_events: up to `capacity` events from what the last
    /// take left, else waits for more and takes them. The ring's frames come before the
    /// socket's: the supervisor writes to the ring only once the worker took what it sent on
    /// the socket.
    private func nextEvents(timeoutMilliseconds: Int64, into out: UnsafeMutablePointer<agent_event>, capacity: Int, count: inout Int) -> Int32 {
        receiveLock.lock()
        defer { receiveLock.unlock() }
        count = 0
        let deadline = timeoutMilliseconds > 0 ? Date(saturatingSecondsFromNow: Double(timeoutMilliseconds) / 1000) : nil
        while true {
            if ringReceiver?.hasBatch != true, !inbox.hasTaken, let status = takeDeliveries(timeoutMilliseconds: timeoutMilliseconds, deadline: deadline) {
                return status
            }
            while count < capacity, let event = ringReceiver?.next() ?? inbox.next() {
                out[count] = event
                count += 1
            }
            ringReceiver?.markHandedOut()
            // A batch of malformed frames hands out nothing: the next one is taken (or waited
            // for) rather than an empty receive returned, after which nothing would wake a
            // module that waits for its notifier.
            if count > 0 || ringReceiver == nil || inbox.hasTaken { return Int32(AGENT_OK) }
        }
    }

    /// Takes the next deliveries (the ring's, else the socket's), waiting for them until
    /// `deadline` (none: no limit; a timeout of 0: not at all). Nil once there are some, else
    /// the receive's status (stopped, or timed out). Under `receiveLock`.
    private func takeDeliveries(timeoutMilliseconds: Int64, deadline: Date?) -> Int32? {
        while ringReceiver?.take() != true {
            lock.lock()
            if inbox.publishedCount > 0 {
                let frameBytes = inbox.takeAll()
                lock.unlock()
                // Reported when taken, not when served: the supervisor refills the window
                // while the module works through the batch.
                acknowledge(frameBytes)
                return nil
            }
            // Nothing yet: the supervisor's next publish must wake this receive (or the
            // module's notifier), unless it published meanwhile.
            if let ringReceiver, !ringReceiver.prepareToWait() {
                lock.unlock()
                continue
            }
            if stopRequested || timeoutMilliseconds == 0 {
                lock.unlock()
                return Int32(stopRequested ? AGENT_STOPPED : AGENT_TIMEOUT)
            }
            if let ringReceiver {
                lock.unlock()
                if sleepOnRing(ringReceiver, until: deadline) { continue }
                return Int32(AGENT_TIMEOUT)
            }
            // The reader thread broadcasts on a wake, a delivery on the socket or a stop.
            let signalled = deadline.map { lock.wait(untilSaturated: $0) } ?? { lock.wait(); return true }()
            let published = inbox.publishedCount > 0
            lock.unlock()
            if !signalled, !published, ringReceiver?.take() != true {
                return Int32(stopRequested ? AGENT_STOPPED : AGENT_TIMEOUT)
            }
            if ringReceiver?.hasBatch == true { return nil }
        }
        return nil
    }

    private func loadState(_ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, _ length: UnsafeMutablePointer<Int>?) -> Int32 {
        let reply = request(.loadState, body: EmptyCollection(), reset: { stateReply = nil }, reply: { stateReply })
        guard let reply else { return Int32(AGENT_ERROR) }
        switch reply.status {
        case 0:
            currentState.deallocate()
            currentState = .allocate(byteCount: max(1, reply.bytes.count), alignment: 8)
            reply.bytes.withUnsafeBytes { currentState.copyMemory(from: $0) }
            data?.pointee = UnsafePointer(currentState.baseAddress!.assumingMemoryBound(to: UInt8.self))
            length?.pointee = reply.bytes.count
            return Int32(AGENT_OK)
        case 1: return Int32(AGENT_NO_STATE)
        default: return Int32(AGENT_ERROR)
        }
    }

    private func saveState(_ data: UnsafePointer<UInt8>?, _ length: Int) -> Int32 {
        let bytes = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : length)
        guard bytes.count <= FrameCodec.largestPart else { return Int32(AGENT_ERROR) }
        let reply = request(.saveState, body: bytes, reset: { saveReply = nil }, reply: { saveReply })
        switch reply {
        case 0: return Int32(AGENT_OK)
        case 2: return Int32(AGENT_STORE_UNAVAILABLE)
        default: return Int32(AGENT_ERROR)
        }
    }

    /// Sends a query to the supervisor and waits for its rows (or error text). Each call has
    /// an id that its answer carries back, so that handlers querying at once each get their
    /// own; the answer stays valid until the calling thread's next `query` call (or its end).
    func query(sql: String, params: String, _ json: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, _ length: UnsafeMutablePointer<Int>?) -> Int32 {
        let request = JSONValue.object(["sql": .string(sql), "params": (try? JSONValue.parse(params)) ?? .array([])]).serialized()
        var reply: (status: UInt8, bytes: [UInt8])?
        let body = Array(request.utf8)
        if body.count > FrameCodec.maxFrameLength - 16 {
            reply = (1, Array("the query is \(body.count) bytes, more than a frame holds".utf8))
        } else {
            reply = ask(.query, body)
        }
        let answer = reply ?? (1, Array("the supervisor is gone".utf8))
        let storage = queryAnswers.replace(with: answer.bytes)
        json?.pointee = UnsafePointer(storage.assumingMemoryBound(to: UInt8.self))
        length?.pointee = answer.bytes.count
        return answer.status == 0 ? Int32(AGENT_OK) : Int32(AGENT_ERROR)
    }

    /// Sends a request with an id (`query`, `chatTool`) and waits for the answer that carries
    /// it back (nil: the supervisor went away, or no answer before `timeout` seconds).
    func ask(_ kind: FrameKind, _ body: [UInt8], timeout: Double = .infinity) -> (status: UInt8, bytes: [UInt8])? {
        let deadline = Date().timeIntervalSince1970 + timeout
        lock.lock()
        nextQueryID &+= 1
        let id = nextQueryID
        pendingQueries[id] = .some(nil)
        lock.unlock()
        channel.send { QueryFrame.appendRequest(id: id, json: body, to: $0, kind: kind) }
        lock.lock()
        while pendingQueries[id].map({ $0 == nil }) == true, !channelClosed, Date().timeIntervalSince1970 < deadline { lock.wait(seconds: 1) }
        let reply = pendingQueries.removeValue(forKey: id) ?? nil
        lock.unlock()
        return reply
    }

    /// Sends a shared-memory request to the supervisor and waits for its answer; the answer
    /// stays valid until the calling thread's next `memory` call.
    func memory(token: UInt64, request: UnsafeRawBufferPointer, _ json: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                _ length: UnsafeMutablePointer<Int>?) -> Int32 {
        var body = withUnsafeBytes(of: token.littleEndian) { Array($0) }
        body.append(contentsOf: request)
        let reply: (status: UInt8, bytes: [UInt8])
        if body.count > FrameCodec.maxFrameLength - 16 {
            reply = (1, Array("the memory request is \(body.count) bytes, more than a frame holds".utf8))
        } else {
            memoryLock.lock()
            reply = self.request(.memory, body: body, reset: { memoryReply = nil }, reply: { memoryReply }) ?? (1, Array("the supervisor is gone".utf8))
            memoryLock.unlock()
        }
        let thread = UInt(pthread_self())
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, reply.bytes.count), alignment: 8)
        reply.bytes.withUnsafeBytes { storage.copyMemory(from: $0) }
        lock.lock()
        memoryAnswers.updateValue(storage, forKey: thread)?.deallocate()
        lock.unlock()
        json?.pointee = UnsafePointer(storage.baseAddress!.assumingMemoryBound(to: UInt8.self))
        length?.pointee = reply.bytes.count
        return reply.status == 0 ? Int32(AGENT_OK) : Int32(AGENT_ERROR)
    }

    /// Sends a request and waits for its reply (nil if the supervisor went away): `reset`
    /// clears the reply and `reply` reads it, both under the lock. (The supervisor sends
    /// replies ahead of the deliveries it has queued.)
    private func request<Reply>(_ kind: FrameKind, body: some Collection<UInt8>, reset: () -> Void, reply: () -> Reply?) -> Reply? {
        lock.lock()
        reset()
        lock.unlock()
        channel.send(kind, body: body)
        lock.lock()
        defer { lock.unlock() }
        while reply() == nil, !channelClosed { lock.wait(seconds: 1) }
        return reply()
    }

    /// Deliveries taken but not yet reported to the supervisor, in frame bytes (under
    /// `receiveLock`).
    private var unacknowledged = 0

    /// Tells the supervisor, a quarter of its delivery window at a time, how many bytes of
    /// deliveries the receiving side took: it keeps at most a window's worth on the way to the
    /// process, and the rest in its own queue, where the process's `when_full` policy applies.
    private func acknowledge(_ frameBytes: Int) {
        unacknowledged += frameBytes
        // With a ring, the socket carries only frames too big for it, and the supervisor
        // waits for each to be taken: at once.
        guard ringReceiver != nil || unacknowledged >= FrameCodec.deliveryWindow / 4 else { return }
        let bytes = UInt64(unacknowledged)
        unacknowledged = 0
        channel.send { buffer in
            FrameCodec.appendHeader(.taken, bodyLength: 8, to: buffer)
            buffer.append(8) { $0.storeBytes(of: bytes.littleEndian, as: UInt64.self) }
        }
    }

    /// Set when the supervisor closed the channel: waiters give up.
    private var channelClosed = false

    func markChannelClosed() {
        publishDeliveries()
        lock.lock()
        channelClosed = true
        lock.unlock()
        requestStop()
    }
}
