import AgentCore
import AgentLoop
import AgentSupervision
import AgentWork
import Foundation
import JSONSchema

/// Events across hosts (issue 26 item 4). Publishing: an event whose type the settings'
/// `fleet.publish` lists is handed to the fleet's store as it is routed (no other event goes
/// there: a source's cached lookup says whether its type is published, and the one-subscriber
/// fast path is taken only when it is not). Subscribing: while a monitor subscribes to
/// `fleet:TYPE`, the agent reads the fleet's events of those types after its cursor (woken by
/// NOTIFY, polling every `poll` seconds), hands each to the subscribers as `fleet:TYPE` from
/// `AGENT/SOURCE` with its original time, and records its cursor once the events were handed
/// to the workers. Reading pauses while a subscriber's queue is over half full: the database
/// holds the rest, so that no fleet event is dropped by a full queue.
extension Supervisor {
    /// Events read at once.
    static let fleetEventBatch = 500

    func startFleetEvents() {
        guard fleet != nil else { return }
        if !fleetPublished.isEmpty {
            logger.info("fleet: publishing event types \(fleetPublished.sorted().joined(separator: ", "))")
        }
        fleetEventTick()
    }

    /// The published types this agent's monitors subscribe to (`fleet:TYPE` → TYPE).
    var fleetSubscribedTypes: [String] {
        let prefix = FleetSettings.subscriptionPrefix
        var types = Set<String>()
        for (key, list) in subscribers where key.hasPrefix(prefix) && !list.isEmpty { types.insert(String(key.dropFirst(prefix.count))) }
        for (key, list) in groupSubscribers where key.hasPrefix(prefix) && !list.isEmpty { types.insert(String(key.dropFirst(prefix.count))) }
        return types.sorted()
    }

    /// Hands a routed event of a published type to the fleet's store (written by its writer).
    func publishToFleet(type: String, source: String, timeNanoseconds: Int64, payload: UnsafeRawBufferPointer) {
        guard let fleet else { return }
        fleet.eventStore.publish(FleetEvent(agentID: fleet.settings.agentID, source: source, type: type,
                                            timeNanoseconds: timeNanoseconds, payload: Array(payload)))
    }

    /// Every `poll` seconds: read what a lost wakeup left, and record the cursor.
    private func fleetEventTick() {
        guard let fleet, !stopping else { return }
        readFleetEvents()
        recordFleetCursor()
        fleetTimers["events"] = loop.schedule(after: fleet.settings.poll) { [weak self] in self?.fleetEventTick() }
    }

    /// Reads the next events after the cursor, if a monitor subscribes and has room.
    func readFleetEvents() {
        guard let fleet, !stopping else { return }
        let types = fleetSubscribedTypes
        guard !types.isEmpty else { return }
        let store = fleet.eventStore
        let inbox = loop.inbox
        let this = LoopBound(value: self)
        if !fleetEvents.listening {
            fleetEvents.listening = true
            store.listen { inbox.post { this.value.readFleetEvents() } }
        }
        guard let cursor = fleetEvents.cursor else { return askFleetCursor() }
        guard !fleetEvents.reading else {
            fleetEvents.readAgain = true
            return
        }
        // A subscriber behind: the database keeps the rest; the tick asks again.
        guard fleetSubscribers(of: types).allSatisfy({ $0.pendingBytes <= $0.queueLimit / 2 }) else { return }
        fleetEvents.reading = true
        fleetEvents.readAgain = false
        let limit = Self.fleetEventBatch
        Task {
            let result = await Result { try await store.events(types: types, after: cursor, limit: limit) }
            inbox.post { this.value.receivedFleetEvents(result) }
        }
    }

    private func askFleetCursor() {
        guard let fleet, !fleetEvents.askingCursor else { return }
        fleetEvents.askingCursor = true
        let store = fleet.eventStore, agent = fleet.settings.agentID
        let inbox = loop.inbox
        let this = LoopBound(value: self)
        Task {
            let result = await Result { try await store.cursor(of: agent) }
            inbox.post {
                let supervisor = this.value
                supervisor.fleetEvents.askingCursor = false
                switch result {
                case .success(let cursor):
                    supervisor.fleetEvents.cursor = cursor
                    supervisor.fleetEvents.recorded = cursor
                    supervisor.logger.info("fleet: receiving \(supervisor.fleetSubscribedTypes.map { "fleet:" + $0 }.joined(separator: ", ")) after event \(cursor)")
                    supervisor.readFleetEvents()
                case .failure(let error):
                    supervisor.fleetReadFailed(error)
                }
            }
        }
    }

    private func receivedFleetEvents(_ result: Result<[FleetEvent], any Error>) {
        fleetEvents.reading = false
        switch result {
        case .success(let events):
            if let failing = fleetEvents.failing {
                logger.notice("fleet: reading the fleet's events again (\(failing) is over)")
                fleetEvents.failing = nil
            }
            for event in events {
                deliverFleetEvent(event)
                fleetEvents.cursor = event.seq
            }
            fleetEvents.received += events.count
            if events.count == Self.fleetEventBatch || fleetEvents.readAgain { readFleetEvents() }
        case .failure(let error):
            fleetReadFailed(error)
        }
    }

    private func fleetReadFailed(_ error: any Error) {
        if fleetEvents.failing == nil {
            logger.warning("fleet: cannot read the fleet's events (\(error)); trying again every \(ProcessPolicy.format(fleet?.settings.poll ?? 1)) s")
        }
        fleetEvents.failing = "\(error)"
    }

    /// Shows, stores and publishes to the outputs an event of the fleet as `fleet:TYPE` from
    /// `AGENT/SOURCE`, and queues it for its subscribers (and triggers).
    private func deliverFleetEvent(_ event: FleetEvent) {
        let type = event.subscribedType, source = event.qualifiedSource
        let typeBytes = Array(type.utf8), sourceBytes = Array(source.utf8)
        typeBytes.withUnsafeBytes { t in
            event.payload.withUnsafeBytes { p in
                console.event(source: source, type: t, timeNanoseconds: event.timeNanoseconds, payload: p)
                deliveryScratch.removeAll(keepingCapacity: true)
                sourceBytes.withUnsafeBytes {
                    EventFrame.appendDelivery(EventFrame.Emitted(type: t, timeNanoseconds: event.timeNanoseconds, payload: p), source: $0, to: deliveryScratch)
                }
            }
        }
        store?.append(type: type, source: source, time: Double(event.timeNanoseconds) / 1e9, payload: event.payload)
        if let outputs, outputs.wants(.event) {
            outputs.publish(.event(source: source, type: type, payload: event.payload, time: event.timeNanoseconds))
        }
        for target in (subscribers[type] ?? []) + wildcardSubscribers where target.acceptsDeliveries { queueFleetDelivery(to: target) }
        for group in (groupSubscribers[type] ?? []) + wildcardGroups {
            if let target = group.pick(bytes: deliveryScratch.count) { queueFleetDelivery(to: target) }
        }
        if let triggers = taskTriggers[type] {
            event.payload.withUnsafeBytes { fire(triggers, type: type, source: source, timeNanoseconds: event.timeNanoseconds, payload: $0) }
        }
    }

    private func queueFleetDelivery(to target: SupervisedProcess) {
        // Never dropped for a full queue: reading waits while a subscriber is half full.
        deliveryScratch.withUnsafeBytes { target.outgoing.append($0) }
        target.eventsDelivered += 1
        markDirty(target)
    }

    /// The processes that take deliveries of the fleet's events of `types` (replicas
    /// included; a stopped or failed one gets none, and holds nobody back).
    private func fleetSubscribers(of types: [String]) -> [SupervisedProcess] {
        var list = wildcardSubscribers + wildcardGroups.flatMap(\.members)
        for type in types {
            let key = FleetSettings.subscriptionPrefix + type
            list += subscribers[key] ?? []
            list += (groupSubscribers[key] ?? []).flatMap(\.members)
        }
        return list.filter(\.acceptsDeliveries)
    }

    /// Records the cursor handed over a second ago or more, once no subscriber's queue in this
    /// agent held anything then (everything was in the workers).
    private func recordFleetCursor() {
        guard let fleet, let cursor = fleetEvents.cursor else { return }
        let now = EventLoop.now()
        guard now - fleetEvents.candidateAt >= 1 else { return }
        if let candidate = fleetEvents.candidate, candidate > fleetEvents.recorded {
            fleet.eventStore.record(cursor: candidate, of: fleet.settings.agentID)
            fleetEvents.recorded = candidate
        }
        fleetEvents.candidate = nil
        if fleetSubscribers(of: fleetSubscribedTypes).allSatisfy({ $0.pendingBytes == 0 }) {
            fleetEvents.candidate = cursor
            fleetEvents.candidateAt = now
        }
    }

    /// `fleet status`'s `events`: what this agent publishes and receives.
    var fleetEventsStatus: JSONValue {
        guard let fleet else { return .null }
        let figures = fleet.eventStore.figures
        var object: JSONObject = [
            "published_types": .array(fleetPublished.sorted().map(JSONValue.string)),
            "published": .number(JSONNumber(figures.published)), "backlog": .number(JSONNumber(figures.backlog)),
            "dropped": .number(JSONNumber(figures.dropped)),
            "subscribed_types": .array(fleetSubscribedTypes.map { .string(FleetSettings.subscriptionPrefix + $0) }),
            "received": .number(JSONNumber(fleetEvents.received)),
        ]
        if let cursor = fleetEvents.cursor {
            object["cursor"] = .number(JSONNumber(Int(cursor)))
            object["recorded_cursor"] = .number(JSONNumber(Int(fleetEvents.recorded)))
        }
        if let failing = figures.failing ?? fleetEvents.failing { object["failing"] = .string(failing) }
        return .object(object)
    }
}
