import AgentModuleABI
import Foundation

/// The host's callback table, wrapped. Valid only while `run_process` runs; the SDK makes sure
/// module code cannot reach it afterwards (the context is invalidated first).
final class HostBridge: @unchecked Sendable {
    private let api: UnsafePointer<agent_host_api>
    private var ctx: UnsafeMutableRawPointer? { api.pointee.host_ctx }

    init(_ api: UnsafePointer<agent_host_api>) { self.api = api }

    private func has<T>(_ field: KeyPath<agent_host_api, T>) -> Bool {
        guard let offset = MemoryLayout<agent_host_api>.offset(of: field) else { return false }
        return offset + MemoryLayout<T>.size <= Int(api.pointee.struct_size)
    }

    func emit(type: String, payload: [UInt8]) -> Bool {
        guard let emit = api.pointee.emit else { return false }
        var type = type
        return type.withUTF8 { t in
            payload.withUnsafeBufferPointer { p in
                t.withMemoryRebound(to: CChar.self) { tc in
                    emit(ctx, tc.baseAddress, tc.count, p.baseAddress, p.count) == AGENT_OK
                }
            }
        }
    }

    func send(level: MessageLevel, text: String) {
        guard let send = api.pointee.send_message else { return }
        var text = text
        _ = text.withUTF8 { t in t.withMemoryRebound(to: CChar.self) { send(ctx, level.rawValue, $0.baseAddress, $0.count) } }
    }

    func log(level: MessageLevel, text: String) {
        guard let log = api.pointee.log else { return }
        var text = text
        text.withUTF8 { t in t.withMemoryRebound(to: CChar.self) { log(ctx, level.rawValue, $0.baseAddress, $0.count) } }
    }

    enum Next { case event(Event), timeout, stopped }

    func nextEvent(timeoutMilliseconds: Int64) -> Next {
        guard let next = api.pointee.next_event else { return .stopped }
        var raw = agent_event()
        switch Int(next(ctx, timeoutMilliseconds, &raw)) {
        case Int(AGENT_OK):
            var names = RecentNames()
            let storage = PayloadStorage(capacity: raw.payload == nil ? 0 : raw.payload_len)
            return .event(Self.event(raw, names: &names, storage: storage))
        case Int(AGENT_TIMEOUT): return .timeout
        default: return .stopped
        }
    }

    enum Batch { case events(EventBatch), timeout, stopped }

    /// Up to `limit` events in one call to the host (`next_events`), or one at a time from
    /// hosts that predate it.
    func nextEvents(timeoutMilliseconds: Int64, limit: Int) -> Batch {
        guard has(\.next_events), let next = api.pointee.next_events else {
            switch nextEvent(timeoutMilliseconds: timeoutMilliseconds) {
            case .event(let first):
                var batch = [first]
                while batch.count < limit, case .event(let more) = nextEvent(timeoutMilliseconds: 0) { batch.append(more) }
                return .events(EventBatch.make(batch))
            case .timeout: return .timeout
            case .stopped: return .stopped
            }
        }
        return withUnsafeTemporaryAllocation(of: agent_event.self, capacity: limit) { out -> Batch in
            var count = 0
            switch Int(next(ctx, timeoutMilliseconds, out.baseAddress, limit, &count)) {
            case Int(AGENT_OK):
                // Events of one batch mostly share their type and source: their strings are
                // made once. Their payloads share one allocation.
                let raw = out[0..<min(count, limit)]
                var names = RecentNames()
                let storage = PayloadStorage(capacity: raw.reduce(0) { $0 + ($1.payload == nil ? 0 : $1.payload_len) })
                let batch = EventBatch.make(capacity: raw.count)
                for event in raw { batch.append(Self.event(event, names: &names, storage: storage)) }
                return .events(batch)
            case Int(AGENT_TIMEOUT): return .timeout
            default: return .stopped
            }
        }
    }

    /// The last type and source decoded in one call to the host, with their bytes and where
    /// the host had them.
    private struct RecentNames {
        typealias Name = (bytes: [UInt8], text: String, pointer: UnsafePointer<CChar>?)
        var type: Name = ([], "", nil)
        var source: Name = ([], "", nil)

        static func text(_ pointer: UnsafePointer<CChar>?, _ count: Int, _ recent: inout Name) -> String {
            guard let pointer, count > 0 else { return "" }
            // The host's memory does not change during the call: the same place, the same name
            // (the worker hands out one place for a name repeated in a batch).
            if pointer == recent.pointer, count == recent.bytes.count { return recent.text }
            let bytes = UnsafeRawBufferPointer(start: pointer, count: count)
            if recent.bytes.count == count, recent.bytes.withUnsafeBytes({ HostBridge.same($0.baseAddress!, UnsafeRawPointer(pointer), count) }) {
                recent.pointer = pointer
                return recent.text
            }
            recent = (Array(bytes), String(decoding: bytes, as: UTF8.self), pointer)
            return recent.text
        }
    }

    /// Whether `count` bytes at `a` and `b` are equal: names are a few bytes, for which a call
    /// to memcmp cost more than the comparison.
    @inline(__always)
    private static func same(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
        var index = 0
        while index + 8 <= count {
            guard a.loadUnaligned(fromByteOffset: index, as: UInt64.self) == b.loadUnaligned(fromByteOffset: index, as: UInt64.self) else { return false }
            index += 8
        }
        while index < count {
            guard a.load(fromByteOffset: index, as: UInt8.self) == b.load(fromByteOffset: index, as: UInt8.self) else { return false }
            index += 1
        }
        return true
    }

    /// Copies a host-owned event into an `Event`, its payload into `storage`.
    private static func event(_ raw: agent_event, names: inout RecentNames, storage: PayloadStorage) -> Event {
        let length = raw.payload == nil ? 0 : raw.payload_len
        let offset = storage.append(UnsafeRawBufferPointer(start: raw.payload, count: length))
        return Event(type: RecentNames.text(raw.type, raw.type_len, &names.type),
                     source: RecentNames.text(raw.source, raw.source_len, &names.source),
                     timeNanoseconds: raw.time_ns,
                     payload: EventPayload(storage: storage, offset: offset, count: length))
    }

    /// The saved state, `.some([])` never means "absent": absent is nil.
    func loadState() throws -> [UInt8]? {
        guard let load = api.pointee.load_state else { throw ProcessContextError("the host offers no state storage") }
        var data: UnsafePointer<UInt8>?
        var len = 0
        let rc = load(ctx, &data, &len)
        if rc == AGENT_NO_STATE { return nil }
        guard rc == AGENT_OK else { throw ProcessContextError("the host could not load the state") }
        return data.map { Array(UnsafeBufferPointer(start: $0, count: len)) } ?? []
    }

    func saveState(_ bytes: [UInt8]) throws {
        guard let save = api.pointee.save_state else { throw ProcessContextError("the host offers no state storage") }
        let rc = bytes.withUnsafeBufferPointer { save(ctx, $0.baseAddress, $0.count) }
        if rc == AGENT_STORE_UNAVAILABLE {
            throw ProcessContextError(code: .storeUnavailable, "the state was not saved: the agent's store cannot write now (the disk is full, or the database is read-only or failing). The process can go on and save again later; a restarted worker of this run still gets this state")
        }
        guard rc == AGENT_OK else { throw ProcessContextError("the host could not save the state") }
    }

    func heartbeat() { api.pointee.heartbeat?(ctx) }

    /// Registers (or, with nil, removes) the host's event notifier; false when the host has
    /// none.
    func setEventNotifier(_ notify: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?, argument: UnsafeMutableRawPointer?) -> Bool {
        guard has(\.set_event_notifier), let set = api.pointee.set_event_notifier else { return false }
        set(ctx, notify, argument)
        return true
    }

    /// Whether the host lets a thread of the module sleep until events arrive (`wait_events`).
    var canWaitForEvents: Bool { has(\.wake_events_wait) && api.pointee.wait_events != nil && api.pointee.wake_events_wait != nil }

    enum Wait { case events, stopped, woken }

    /// Sleeps until events are there, the stop, ``wakeEventsWait()`` or the timeout
    /// (negative: none); takes no event. Only where ``canWaitForEvents``.
    func waitForEvents(timeoutMilliseconds: Int64) -> Wait {
        switch api.pointee.wait_events?(ctx, timeoutMilliseconds) {
        case Int32(AGENT_OK): .events
        case Int32(AGENT_TIMEOUT): .woken
        default: .stopped
        }
    }

    /// Ends the host's `wait_events` now or the next one. Any thread.
    func wakeEventsWait() { api.pointee.wake_events_wait?(ctx) }

    /// Runs a read-only query through the host; returns the JSON rows.
    func query(sql: String, parameters: [any Sendable]) throws -> [UInt8] {
        guard has(\.query), let query = api.pointee.query else { throw ProcessContextError("this host offers no store queries") }
        let params = try JSONSerialization.data(withJSONObject: parameters.map { value -> Any in
            switch value {
            case let v as String: v
            case let v as Int: v
            case let v as Double: v
            case let v as Bool: v
            default: "\(value)"
            }
        })
        var json: UnsafePointer<UInt8>?
        var length = 0
        var sql = sql
        let rc = sql.withUTF8 { s in
            params.withUnsafeBytes { p in
                s.withMemoryRebound(to: CChar.self) { sc in
                    p.withMemoryRebound(to: CChar.self) { pc in
                        query(ctx, sc.baseAddress, sc.count, pc.baseAddress, pc.count, &json, &length)
                    }
                }
            }
        }
        let bytes = json.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
        guard rc == AGENT_OK else { throw ProcessContextError("query failed: \(String(decoding: bytes, as: UTF8.self))") }
        return bytes
    }

    /// A shared-memory request (JSON) through the host (`memory`); the answer's JSON bytes.
    /// `token`: the task run asking (its workflow run's scope), 0 for a process.
    func memory(token: UInt64, request: [UInt8]) throws -> [UInt8] {
        guard has(\.memory), let memory = api.pointee.memory else {
            throw ProcessContextError("this host offers no shared memory (an agent-worker older than context.memory)")
        }
        var json: UnsafePointer<UInt8>?
        var length = 0
        let rc = request.withUnsafeBufferPointer { r in
            r.withMemoryRebound(to: CChar.self) { memory(ctx, token, $0.baseAddress, $0.count, &json, &length) }
        }
        let bytes = json.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
        guard rc == AGENT_OK else { throw ProcessContextError("shared memory: \(String(decoding: bytes, as: UTF8.self))") }
        return bytes
    }

    // MARK: Task runs (ABI 2)

    func taskProgress(token: UInt64, fraction: Double?, message: String?) {
        guard has(\.task_progress), let progress = api.pointee.task_progress else { return }
        guard var message else {
            _ = progress(ctx, token, fraction ?? -1, nil, 0)
            return
        }
        _ = message.withUTF8 { m in m.withMemoryRebound(to: CChar.self) { progress(ctx, token, fraction ?? -1, $0.baseAddress, $0.count) } }
    }

    func taskHeartbeat(token: UInt64) {
        guard has(\.task_heartbeat) else { return }
        api.pointee.task_heartbeat?(ctx, token)
    }

    func taskCancelled(token: UInt64) -> Bool {
        guard has(\.task_cancelled), let cancelled = api.pointee.task_cancelled else { return false }
        return cancelled(ctx, token) != 0
    }

    func taskComplete(token: UInt64, succeeded: Bool, data: [UInt8]) {
        guard has(\.task_complete), let complete = api.pointee.task_complete else { return }
        _ = data.withUnsafeBufferPointer { complete(ctx, token, succeeded ? Int32(AGENT_OK) : Int32(AGENT_ERROR), $0.baseAddress, $0.count) }
    }

    /// The watchdog period the host enforces, 0 when there is none.
    var watchdogMilliseconds: Int64 { has(\.watchdog_ms) ? api.pointee.watchdog_ms : 0 }

    var stopRequested: Bool { (api.pointee.stop_requested?(ctx) ?? 0) != 0 }

    /// Calls `handler` once when the host asks the process to stop.
    func onStop(_ handler: @escaping @Sendable () -> Void) {
        guard has(\.set_stop_handler), let register = api.pointee.set_stop_handler else { return }
        let box = Unmanaged.passRetained(StopHandlerBox(handler))
        register(ctx, { arg in
            guard let arg else { return }
            Unmanaged<StopHandlerBox>.fromOpaque(arg).takeUnretainedValue().handler()
        }, box.toOpaque())
    }
}

/// Holds the stop handler for as long as the worker lives (released with the process).
final class StopHandlerBox: Sendable {
    let handler: @Sendable () -> Void
    init(_ handler: @escaping @Sendable () -> Void) { self.handler = handler }
}

/// An error from the process context: the message says what failed, the code what kind of
/// failure it is.
public struct ProcessContextError: Error, CustomStringConvertible {
    /// What kind of failure: ``Code/storeUnavailable`` is one to handle and go on from.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The spelling in answers and logs (`failed`, `store_unavailable`, `memory_conflict`).
        public let description: String
        /// Something failed (see the message).
        public static let failed = Code(description: "failed")
        /// `saveState`: the agent's store cannot write now (disk full, read-only database).
        /// Not fatal: go on and save again later.
        public static let storeUnavailable = Code(description: "store_unavailable")
        /// Shared memory: a write expected another version than the key has (see
        /// ``ProcessContextError/currentVersion``). Read the key again and retry.
        public static let memoryConflict = Code(description: "memory_conflict")
    }

    /// What kind of failure it is.
    public let code: Code
    /// What failed, said for a person.
    public let description: String
    /// For ``Code/memoryConflict``: the key's version now (0: it does not exist).
    public let currentVersion: Int?
    init(code: Code = .failed, _ description: String, currentVersion: Int? = nil) {
        self.code = code
        self.description = description
        self.currentVersion = currentVersion
    }
}
