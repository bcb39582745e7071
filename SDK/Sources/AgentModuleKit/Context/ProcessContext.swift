import Dispatch
import Foundation
import Synchronization

/// What a running process can do: emit events, send messages, log, receive events, keep
/// state across restarts, and learn that it should stop.
///
/// A context is valid while the process's `run(context:)` runs; calls made after it returned
/// do nothing (or throw).
public final class ProcessContext: Sendable {
    /// The process's name in `settings.json`, e.g. `"trades"`.
    public let processName: String
    /// The process type, e.g. `"trade_feed"`.
    public let processType: String

    private let host: HostBridge
    private let valid = Atomic<Bool>(true)
    /// Counts calls into the context (the run loop is alive): a relaxed update per event,
    /// where reading a clock per event cost more than the rest of an emit.
    private let activity = Atomic<UInt64>(0)
    /// What the heartbeat task saw last: the count and when it last changed (monotonic ns).
    private let lastSeenActivity = Mutex((count: UInt64(0), changedAt: DispatchTime.now().uptimeNanoseconds))
    /// How many calls are waiting (sleep, next event): waiting is healthy too.
    private let waiting = Atomic<Int>(0)
    /// Events fetched from the host but not yet handed to the process.
    private let received = Mutex(EventBuffer())
    /// Blocking receives run here, off Swift's cooperative thread pool (hosts without an
    /// event notifier only).
    private let receiveQueue: DispatchQueue
    /// The receive waiting for the host's event notifier, or a notification that came while
    /// none waited.
    private let eventWait = Mutex(EventWait())
    private let notified = Atomic<Bool>(false)

    private struct EventWait: ~Copyable {
        /// Receives waiting (usually one; every one is resumed, and all but one wait again).
        var waiters: [CheckedContinuation<Void, Never>] = []
        var pending = false
    }

    init(processName: String, processType: String, host: HostBridge) {
        self.processName = processName
        self.processType = processType
        self.host = host
        self.receiveQueue = DispatchQueue(label: "agent.receive.\(processName)")
    }

    func invalidate() { valid.store(false, ordering: .releasing) }

    @usableFromInline
    func noteActivity() {
        // A load and a store, not an atomic add (a locked instruction per event): the watchdog
        // only looks for a change, and racing callers still change the count.
        activity.store(activity.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// Whether the run loop showed life within the last `nanoseconds` (or is waiting). Called
    /// now and then (by the heartbeat task), which is when a change of the count is dated.
    func isResponsive(within nanoseconds: UInt64) -> Bool {
        if waiting.load(ordering: .relaxed) > 0 { return true }
        let now = DispatchTime.now().uptimeNanoseconds
        let count = activity.load(ordering: .relaxed)
        return lastSeenActivity.withLock { seen in
            if seen.count != count { seen = (count, now) }
            return now &- seen.changedAt < nanoseconds
        }
    }

    /// Sends heartbeats while the run loop is responsive, for the host's watchdog. Returns the
    /// task (cancelled when the process ends), or nil when the host has no watchdog.
    func startHeartbeats() -> Task<Void, Never>? {
        let watchdog = host.watchdogMilliseconds
        guard watchdog > 0 else { return nil }
        // The host sends at most 100 years; a larger value must still not overflow.
        let period = UInt64(min(watchdog, 3_155_760_000_000)) * 1_000_000 / 3
        return Task.detached { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: period)
                if isValid, isResponsive(within: period * 2) { host.heartbeat() }
            }
        }
    }
    private var isValid: Bool { valid.load(ordering: .acquiring) }

    // MARK: Events out

    /// Emits an event whose payload is `payload` encoded as JSON.
    public func emit(_ type: String, payload: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try emit(type, bytes: Array(try encoder.encode(payload)))
    }

    /// Emits an event whose payload is the given JSON text (not checked).
    public func emit(_ type: String, json: String) throws {
        try emit(type, bytes: Array(json.utf8))
    }

    /// Emits an event with raw payload bytes. Throws `CancellationError` once the process is
    /// stopping.
    public func emit(_ type: String, bytes: [UInt8]) throws {
        guard !type.isEmpty else { throw ProcessContextError("an event type must not be empty") }
        noteActivity()
        guard isValid, host.emit(type: type, payload: bytes) else {
            // The host refuses events once it asked the process to stop: end like a cancelled task.
            if !isValid || host.stopRequested { throw CancellationError() }
            throw ProcessContextError("event \"\(type)\" was not accepted by the host")
        }
    }

    /// Sends a human-readable message (shown on the console and in the agent's conversation).
    public func send(_ text: String, level: MessageLevel = .info) {
        noteActivity()
        if isValid { host.send(level: level, text: text) }
    }

    /// Sends an alert: a message at warning level.
    public func alert(_ text: String) { send(text, level: .warning) }

    /// The agent's shared memory: named JSON values that workflows, processes and task
    /// handlers read and write (see ``SharedMemory``; a process has the agent-wide scope).
    public var memory: SharedMemory { SharedMemory(host: host, token: 0, isValid: { [self] in isValid }) }

    /// Writes a line to the agent's log, tagged with this process's name.
    public func log(_ text: String, level: MessageLevel = .info) {
        if isValid { host.log(level: level, text: text) }
    }

    // MARK: Events in

    /// Asks the host to say when events arrive (see `set_event_notifier`), so that receiving
    /// needs no thread blocked in the host. Until `stopEventNotifications()`, the context must
    /// stay alive.
    func startEventNotifications() {
        let registered = host.setEventNotifier({ argument in
            Unmanaged<ProcessContext>.fromOpaque(argument!).takeUnretainedValue().eventsArrived()
        }, argument: Unmanaged.passUnretained(self).toOpaque())
        notified.store(registered, ordering: .releasing)
    }

    func stopEventNotifications() {
        if notified.load(ordering: .acquiring) { _ = host.setEventNotifier(nil, argument: nil) }
    }

    /// Whether a receive waits for the host to say that events arrived.
    var receiveWaits: Bool { eventWait.withLock { !$0.waiters.isEmpty } }

    /// From the host's reader thread (or the process's own, ``ProcessExecutor``): resume the
    /// waiting receive, or leave word for the next.
    func eventsArrived() {
        let waiters = eventWait.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.waiters.isEmpty { state.pending = true }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The most events fetched from the host at once: a batch's events and payloads stay in
    /// the L1 cache until the module reads them (512 measured slower at 100-byte payloads).
    private static let batchLimit = 128

    /// Waits for the next event delivered to this process; nil once the process should stop.
    public func nextEvent() async -> Event? {
        guard isValid else { return nil }
        // Events already fetched are served without a thread hop.
        if let event = received.withLock({ $0.popFirst() }) {
            noteActivity()
            return event
        }
        guard let batch = await nextBatch() else { return nil }
        let first = received.withLock { buffer in
            buffer.append(contentsOf: batch.takeRest())
            return buffer.popFirst()
        }
        // Another receive may be waiting while the rest of this batch sits here.
        if batch.count > 1 { eventsArrived() }
        return first
    }

    /// The next events delivered to this process (at least one) once there are any; nil once
    /// the process should stop. Whoever takes them serves them: `events` iterators take whole
    /// batches, so that each event costs them no lock.
    @usableFromInline
    func nextBatch() async -> EventBatch? {
        guard isValid else { return nil }
        let buffered = received.withLock { $0.takeAll() }
        if !buffered.isEmpty {
            noteActivity()
            return EventBatch.make(buffered)
        }
        waiting.add(1, ordering: .relaxed)
        defer {
            waiting.subtract(1, ordering: .relaxed)
            noteActivity()
        }
        if notified.load(ordering: .acquiring) {
            // The host's reader thread resumes this task when events arrive: one thread
            // wakeup per batch, none when events are already there.
            while true {
                let buffered = received.withLock { $0.takeAll() }
                if !buffered.isEmpty { return EventBatch.make(buffered) }
                // What the host has, without blocking; an empty batch is nothing yet.
                switch host.nextEvents(timeoutMilliseconds: 0, limit: Self.batchLimit) {
                case .events(let batch) where batch.count > 0: return batch
                case .events, .timeout: break
                case .stopped: return nil
                }
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = eventWait.withLock { state -> Bool in
                        if state.pending {
                            state.pending = false
                            return true
                        }
                        state.waiters.append(continuation)
                        return false
                    }
                    if now { continuation.resume() }
                }
            }
        }
        return await withCheckedContinuation { continuation in
            receiveQueue.async { [host] in
                // Block for the first event, then take whatever else is already there, so that
                // a busy monitor pays one hop per batch rather than per event.
                while true {
                    switch host.nextEvents(timeoutMilliseconds: -1, limit: Self.batchLimit) {
                    // An empty batch (every frame of it malformed) is no reason to end.
                    case .events(let batch) where batch.count > 0: return continuation.resume(returning: batch)
                    case .events, .timeout: continue
                    case .stopped: return continuation.resume(returning: nil)
                    }
                }
            }
        }
    }

    /// The events delivered to this process, until it should stop.
    public var events: Events { Events(context: self) }

    /// An asynchronous sequence of the events delivered to a process. An iterator takes the
    /// events in batches and serves them itself: receive through one iterator (or through
    /// `nextEvent()`) per process.
    public struct Events: AsyncSequence, Sendable {
        public typealias Element = Event
        let context: ProcessContext

        /// Serves the events of one batch after another (see ``ProcessContext/Events``).
        public struct AsyncIterator: AsyncIteratorProtocol {
            @usableFromInline let context: ProcessContext
            @usableFromInline let taken: TakenEvents

            init(context: ProcessContext) {
                self.context = context
                taken = TakenEvents(context: context)
            }

            /// Inlinable so that serving from the taken batch costs the caller no async call.
            @inlinable
            public mutating func next() async -> Event? {
                if let event = taken.next() {
                    context.noteActivity()
                    return event
                }
                guard let more = await context.nextBatch() else { return nil }
                taken.replace(with: more)
                return taken.next()
            }
        }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(context: context) }
    }

    /// Events an iterator took and has not served yet: given back to the context, ahead of
    /// anything else, when the iterator goes away (a `break` out of `for await`).
    @usableFromInline
    final class TakenEvents {
        private struct State {
            /// Keeps `events` alive; told how many were served when it is let go.
            var batch: EventBatch?
            var events: UnsafeMutablePointer<Event>?
            var count = 0
            var served = 0
        }

        private let context: ProcessContext
        /// Behind a pointer that never changes: serving an event costs no dynamic exclusivity
        /// check on a stored property (those were a twelfth of a busy monitor's time), and no
        /// retain of the batch.
        private let state: UnsafeMutablePointer<State>

        init(context: ProcessContext) {
            self.context = context
            state = .allocate(capacity: 1)
            state.initialize(to: State())
        }

        @usableFromInline
        func next() -> Event? {
            guard state.pointee.served < state.pointee.count else { return nil }
            // Moved out: no retain now, and nothing left to release when the batch goes.
            let event = (state.pointee.events.unsafelyUnwrapped + state.pointee.served).move()
            state.pointee.served += 1
            return event
        }

        @usableFromInline
        func replace(with batch: EventBatch) {
            state.pointee.batch?.noteServed(state.pointee.served)
            state.pointee = State(batch: batch, events: batch.events, count: batch.count, served: 0)
        }

        deinit {
            if let batch = state.pointee.batch {
                batch.noteServed(state.pointee.served)
                let rest = batch.takeRest()
                if !rest.isEmpty { context.giveBack(rest) }
            }
            state.deinitialize(count: 1)
            state.deallocate()
        }
    }

    /// Puts events taken but not served back in front of the received ones.
    func giveBack(_ events: [Event]) {
        received.withLock { $0.prepend(contentsOf: events) }
    }

    // MARK: State

    /// The state this process saved last (it survives crashes and restarts), or nil.
    public func loadState<T: Decodable>(_ type: T.Type = T.self) throws -> T? {
        guard isValid else { throw ProcessContextError("the process has ended") }
        guard let bytes = try host.loadState() else { return nil }
        return try JSONDecoder().decode(T.self, from: Data(bytes))
    }

    /// Saves `state` as this process's state, replacing what was saved before. Throws a
    /// ``ProcessContextError`` with code ``ProcessContextError/Code/storeUnavailable`` when the
    /// agent's store cannot write now (a full disk): that is not fatal — catch it, go on, and
    /// save again later.
    public func saveState(_ state: some Encodable) throws {
        guard isValid else { throw ProcessContextError("the process has ended") }
        try host.saveState(Array(try JSONEncoder().encode(state)))
    }

    // MARK: Liveness

    /// Tells the watchdog this process is alive.
    public func heartbeat() {
        noteActivity()
        if isValid { host.heartbeat() }
    }

    /// True once the host asked the process to stop.
    public var isStopRequested: Bool { !isValid || host.stopRequested }

    /// Sleeps; throws `CancellationError` as soon as the host asks the process to stop.
    public func sleep(seconds: Double) async throws {
        waiting.add(1, ordering: .relaxed)
        defer {
            waiting.subtract(1, ordering: .relaxed)
            noteActivity()
        }
        try await Task.sleep(nanoseconds: Saturating.nanoseconds(seconds))
    }
}
