import AgentCore
import AgentLoop
import AgentSupervision
import Foundation
import JSONSchema
import Logging

/// Events across hosts (issue 26 item 4), the receiving side. Publishing is the
/// ``FleetBridge``'s: an event whose type the settings' `fleet.publish` lists is handed to the
/// fleet's store as it is routed. Subscribing: while a monitor subscribes to `fleet:TYPE`, the
/// agent reads the fleet's events of those types after its cursor (woken by NOTIFY, polling
/// every `poll` seconds), hands each to the subscribers as `fleet:TYPE` from `AGENT/SOURCE`
/// with its original time, and records its cursor once the events were handed to the workers.
/// Reading pauses while a subscriber's queue is over half full: the database holds the rest,
/// so that no fleet event is dropped by a full queue.
@LoopActor
package final class FleetEventRelay {
    /// Events read at once.
    nonisolated static let batch = 500

    private let backend: any FleetBackend
    unowned let work: WorkHost
    unowned let events: any EventPublisher
    /// Where this agent got to in the fleet's events its monitors subscribe to.
    private var reader = FleetEventReader()
    private var timer: Int?
    /// When the log last said an event of the fleet was too large (once a minute).
    private var lastOversizeLog = -Double.infinity

    private var loop: EventLoop { work.host.loop }
    private var logger: Logger { work.host.logger }
    private var stopping: Bool { work.host.isStopping }

    init(backend: any FleetBackend, work: WorkHost, events: any EventPublisher) {
        self.backend = backend
        self.work = work
        self.events = events
    }

    func start() { tick() }

    func stop() {
        if let timer { loop.cancel(timer) }
        timer = nil
    }

    /// The fleet's types this agent reads (`fleet:TYPE` → TYPE): those its processes subscribe
    /// to and those its tasks' and workflows' `on_event` (and `wait_event`) wait for — a
    /// trigger needs no subscribing process. Looked up at each read: a reload that adds or
    /// removes them is followed at the next tick (no type left: reading stops).
    private var subscribedTypes: [String] {
        let prefix = FleetSettings.subscriptionPrefix
        var types = Set(events.subscribedTypes(prefix: prefix))
        for type in work.triggers.keys where type.hasPrefix(prefix) && type.count > prefix.count { types.insert(String(type.dropFirst(prefix.count))) }
        return types.sorted()
    }

    /// Every `poll` seconds: read what a lost wakeup left, and record the cursor.
    private func tick() {
        guard !stopping else { return }
        read()
        recordCursor()
        timer = loop.schedule(after: backend.settings.poll) { [weak self] in self?.tick() }
    }

    /// Reads the next events after the cursor, if a monitor subscribes and has room.
    private func read() {
        guard !stopping else { return }
        let types = subscribedTypes
        guard !types.isEmpty else { return }
        let store = backend.eventStore
        let inbox = loop.inbox
        if !reader.listening {
            reader.listening = true
            store.listen { inbox.post { self.read() } }
        }
        guard let cursor = reader.cursor else { return askCursor() }
        guard !reader.reading else {
            reader.readAgain = true
            return
        }
        // A subscriber behind: the database keeps the rest; the tick asks again.
        guard subscribers(of: types).allSatisfy({ $0.pendingBytes <= $0.queueLimit / 2 }) else { return }
        reader.reading = true
        reader.readAgain = false
        let limit = Self.batch
        Task.detached {
            let result = await Result { try await store.events(types: types, after: cursor, limit: limit) }
            inbox.post { self.received(result) }
        }
    }

    private func askCursor() {
        guard !reader.askingCursor else { return }
        reader.askingCursor = true
        let store = backend.eventStore, agent = backend.settings.agentID
        let inbox = loop.inbox
        Task.detached {
            let result = await Result { try await store.cursor(of: agent) }
            inbox.post {
                let relay = self
                relay.reader.askingCursor = false
                switch result {
                case .success(let cursor):
                    relay.reader.cursor = cursor
                    relay.reader.recorded = cursor
                    relay.logger.info("fleet: receiving \(relay.subscribedTypes.map { "fleet:" + $0 }.joined(separator: ", ")) after event \(cursor)")
                    relay.read()
                case .failure(let error):
                    relay.readFailed(error)
                }
            }
        }
    }

    private func received(_ result: Result<[FleetEvent], any Error>) {
        reader.reading = false
        switch result {
        case .success(let events):
            if let failing = reader.failing {
                logger.notice("fleet: reading the fleet's events again (\(failing) is over)")
                reader.failing = nil
            }
            for event in events {
                if deliver(event) { reader.received += 1 } else { reader.skipped += 1 }
                reader.cursor = event.seq
            }
            if events.count == Self.batch || reader.readAgain { read() }
        case .failure(let error):
            readFailed(error)
        }
    }

    private func readFailed(_ error: any Error) {
        if reader.failing == nil {
            logger.warning("fleet: cannot read the fleet's events (\(error)); trying again every \(ProcessPolicy.format(backend.settings.poll)) s")
        }
        reader.failing = "\(error)"
    }

    /// Shows, stores and publishes to the outputs an event of the fleet as `fleet:TYPE` from
    /// `AGENT/SOURCE`, and queues it for its subscribers (never dropped for a full queue:
    /// reading waits while a subscriber is half full) and triggers.
    /// Whether it was delivered (not skipped as too large).
    @discardableResult
    private func deliver(_ event: FleetEvent) -> Bool {
        let type = event.subscribedType, source = event.qualifiedSource
        let limit = work.eventSettings.maximumPayloadBytes
        guard max(event.payload.count, event.payloadBytes) <= limit else {
            let now = EventLoop.now()
            if now - lastOversizeLog >= 60 {
                lastOversizeLog = now
                logger.warning("fleet: event \(TerminalText.shown(type, keepingLines: false)) from \(TerminalText.shown(source, keepingLines: false)) (seq \(event.seq)) has a payload of \(max(event.payload.count, event.payloadBytes)) bytes, more than this agent's events.max_payload_bytes (\(limit)): skipped (said once a minute)")
            }
            return false
        }
        events.publish(type: type, source: source, payload: event.payload, timeNanoseconds: event.timeNanoseconds)
        if let triggers = work.triggers[type] {
            event.payload.withUnsafeBytes { work.fire(triggers, type: type, source: source, timeNanoseconds: event.timeNanoseconds, payload: $0) }
        }
        return true
    }

    /// The processes that take deliveries of the fleet's events of `types`.
    private func subscribers(of types: [String]) -> [SupervisedProcess] {
        events.deliveryTargets(of: types.map { FleetSettings.subscriptionPrefix + $0 })
    }

    /// Records the cursor handed over a second ago or more, once no subscriber's queue in this
    /// agent held anything then (everything was in the workers).
    private func recordCursor() {
        guard let cursor = reader.cursor else { return }
        let now = EventLoop.now()
        guard now - reader.candidateAt >= 1 else { return }
        if let candidate = reader.candidate, candidate > reader.recorded {
            backend.eventStore.record(cursor: candidate, of: backend.settings.agentID)
            reader.recorded = candidate
        }
        reader.candidate = nil
        if subscribers(of: subscribedTypes).allSatisfy({ $0.pendingBytes == 0 }) {
            reader.candidate = cursor
            reader.candidateAt = now
        }
    }

    /// `fleet status`'s `events`: what this agent publishes (`published`) and receives.
    func status(published: Set<String>) -> JSONValue {
        let figures = backend.eventStore.figures
        var object: JSONObject = [
            "published_types": .array(published.sorted().map(JSONValue.string)),
            "published": .number(JSONNumber(figures.published)), "backlog": .number(JSONNumber(figures.backlog)),
            "dropped": .number(JSONNumber(figures.dropped)),
            "subscribed_types": .array(subscribedTypes.map { .string(FleetSettings.subscriptionPrefix + $0) }),
            "received": .number(JSONNumber(reader.received)), "skipped": .number(JSONNumber(reader.skipped)),
        ]
        if let cursor = reader.cursor {
            object["cursor"] = .number(JSONNumber(Int(cursor)))
            object["recorded_cursor"] = .number(JSONNumber(Int(reader.recorded)))
        }
        if let failing = figures.failing ?? reader.failing { object["failing"] = .string(failing) }
        return .object(object)
    }
}
