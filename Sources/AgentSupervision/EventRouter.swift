import AgentCore
import AgentLoop
import Glibc

/// Who gets the events of each type: the processes and replica groups subscribed to it, each
/// source's cached targets for the type it emits, the delivery built once for every target,
/// and the processes with frames to write this turn.
///
/// Routing is the supervisor's hot path (agent-bench figure 4). Calls from the supervisor's
/// module are not inlined (Swift 6.3 inlines no `@inlinable package` function into another
/// module: measured), so the per-event path calls in here as few times as it can, and the
/// router's own per-event state (`generation`, `dirty`) is private: only then can the optimizer
/// drop its dynamic exclusivity checks (`swift_beginAccess`, about 85 instructions each, more
/// than the rest of an event's routing). Nothing here allocates, retains or awaits per event:
/// routing stays synchronous inside the loop's actor (an event is routed in the turn that read
/// it; an `await` or a task per event would cost more than routing it).
@LoopActor
package final class EventRouter {
    /// Event type → processes subscribed to it; `*` subscribers receive every type.
    package private(set) var subscribers: [String: [SupervisedProcess]] = [:]
    package private(set) var wildcardSubscribers: [SupervisedProcess] = []
    /// Replicas subscribed by event type: each event goes to one replica of each group.
    package private(set) var groupSubscribers: [String: [ReplicaGroup]] = [:]
    package private(set) var wildcardGroups: [ReplicaGroup] = []
    /// The processes with `replicas`, by their name in the settings.
    package private(set) var replicaGroups: [String: ReplicaGroup] = [:]
    /// Raised whenever what a source's targets depend on changes (subscriptions, task
    /// triggers, published types): each source then looks its targets up again.
    private var generation = 0
    /// A delivery frame built once for all the targets of an event.
    package let scratch = FrameBuffer()
    /// Processes with frames to write at the end of the turn.
    private var dirty: [SupervisedProcess] = []

    package init() {}

    /// What the sources' targets depend on changed (task triggers, published types): each
    /// looks its targets up again at its next event.
    package func targetsChanged() {
        generation += 1
    }

    /// Subscriptions from the processes' settings; replicas subscribe as their group.
    package func rebuild(_ processes: [SupervisedProcess]) {
        subscribers = [:]
        wildcardSubscribers = []
        groupSubscribers = [:]
        wildcardGroups = []
        replicaGroups = [:]
        for process in processes {
            if let groupName = process.planned.replicaOf {
                group(named: groupName, first: process).add(process)
                continue
            }
            for type in process.subscriptions {
                if type == "*" { wildcardSubscribers.append(process) } else { subscribers[type, default: []].append(process) }
            }
        }
        generation += 1
    }

    private func group(named name: String, first process: SupervisedProcess) -> ReplicaGroup {
        if let existing = replicaGroups[name] { return existing }
        let group = ReplicaGroup(name: name)
        replicaGroups[name] = group
        // The group subscribes once, as its replicas' settings are one.
        for type in process.subscriptions {
            if type == "*" { wildcardGroups.append(group) } else { groupSubscribers[type, default: []].append(group) }
        }
        return group
    }

    /// Whether `source`'s cached targets are not those of `type` (another type, or older
    /// subscriptions).
    package func targetsAreStale(of source: SupervisedProcess, type: UnsafeRawBufferPointer) -> Bool {
        source.routingGeneration != generation || !source.lastEmittedType.holds(type)
    }

    /// Whether `source`'s cached targets are current, and those of the type it emitted last.
    package func targetsAreCurrent(of source: SupervisedProcess) -> Bool {
        source.routingGeneration == generation
    }

    /// Types only the runtime delivers (to the chatbot, from the agent's chat): a process that
    /// emitted `chat.message` had it answered and written into the conversation.
    package static let runtimeOnlyTypes: Set<String> = ["chat.message", "chat.voice"]

    /// Looks up (and caches in the source) the subscribers of the type it emits, the tasks
    /// that type triggers and whether it is published to the fleet.
    package func refreshTargets(of source: SupervisedProcess, type: UnsafeRawBufferPointer, triggers: [String: [TaskTrigger]], published: Set<String>) {
        source.lastEmittedType.removeAll(keepingCapacity: true)
        source.lastEmittedType.append(type)
        // From the copy: the type may lie in the worker's emit ring, which it can change.
        let name = source.lastEmittedType.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        source.lastEmittedTypeName = name
        // As a program's `emit` line is checked (JSONLinesFrame's eventType).
        source.lastTypeRefused = name.unicodeScalars.contains { $0.properties.generalCategory == .control } || Self.runtimeOnlyTypes.contains(name)
        source.lastTargets = (subscribers[name] ?? []) + wildcardSubscribers.filter { $0 !== source }
        // A replica's own group does not get its events back from the wildcard (as a process
        // does not), nor would it pass them around among its replicas.
        let ownGroup = source.planned.replicaOf
        source.lastGroups = (groupSubscribers[name] ?? []) + wildcardGroups.filter { $0.name != ownGroup }
        source.lastTriggers = triggers[name]
        source.lastPublished = published.contains(name)
        if source.lastTypeRefused {
            // No target at all: the rings' runs to a single subscriber do not look at the refusal.
            source.lastTargets = []
            source.lastGroups = []
            source.lastTriggers = nil
            source.lastPublished = false
        }
        source.singleTarget = source.lastTargets.count == 1 && source.lastTriggers == nil && source.lastGroups.isEmpty && !source.lastPublished
            ? Unmanaged.passUnretained(source.lastTargets[0]) : nil
        source.routingGeneration = generation
    }

    /// The common case of routing: one subscriber with room (so nothing to drop and no
    /// producer to pause, whatever its when_full); the frame is built straight into its queue,
    /// and nothing is retained for it. False when that is not the case: the event takes the
    /// general path.
    package func queueForSingleTarget(_ event: EventFrame.Emitted, from source: SupervisedProcess) -> Bool {
        guard let single = source.singleTarget else { return false }
        return single._withUnsafeGuaranteedRef { target -> Bool in
            guard target.acceptsDeliveries else { return true }
            let frameLength = EventFrame.deliveryLength(typeCount: event.type.count, sourceCount: source.nameBytes.count, payloadCount: event.payload.count)
            guard target.pendingBytes + frameLength <= target.queueLimit else { return false }
            source.nameBytes.withUnsafeBytes { EventFrame.appendDelivery(event, source: $0, to: target.outgoing) }
            target.eventsDelivered += 1
            markDirty(target)
            return true
        }
    }

    /// Queues the delivery frame in ``scratch`` for the subscribers of `type` and one replica
    /// of each group subscribed to it, whatever their queues hold: events the work layer
    /// publishes (task, schedule, workflow and fleet events) are never dropped.
    package func queueScratchUndroppable(type: String) {
        for target in (subscribers[type] ?? []) + wildcardSubscribers where target.acceptsDeliveries { queueScratch(to: target) }
        for group in (groupSubscribers[type] ?? []) + wildcardGroups {
            if let target = group.pick(bytes: scratch.count) { queueScratch(to: target) }
        }
    }

    private func queueScratch(to target: SupervisedProcess) {
        scratch.withUnsafeBytes { target.outgoing.append($0) }
        target.eventsDelivered += 1
        markDirty(target)
    }

    /// Queues an event for `process` alone, stamped now, whatever its queue holds (the fleet
    /// relay waits for room itself).
    package func deliver(type: String, source: String, payload: [UInt8], to process: SupervisedProcess) {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let now = Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
        Array(type.utf8).withUnsafeBytes { t in
            payload.withUnsafeBytes { p in
                Array(source.utf8).withUnsafeBytes { EventFrame.appendDelivery(EventFrame.Emitted(type: t, timeNanoseconds: now, payload: p), source: $0, to: process.outgoing) }
            }
        }
        process.eventsDelivered += 1
        markDirty(process)
    }

    /// The types subscribed to that start with `prefix`, without it (the fleet's `fleet:` types).
    package func subscribedTypes(prefix: String) -> [String] {
        var types = Set<String>()
        for (key, list) in subscribers where key.hasPrefix(prefix) && !list.isEmpty { types.insert(String(key.dropFirst(prefix.count))) }
        for (key, list) in groupSubscribers where key.hasPrefix(prefix) && !list.isEmpty { types.insert(String(key.dropFirst(prefix.count))) }
        return types.sorted()
    }

    /// Every process an event of one of `types` may go to (each replica of a group) that
    /// takes deliveries now.
    package func deliveryTargets(of types: [String]) -> [SupervisedProcess] {
        var list = wildcardSubscribers + wildcardGroups.flatMap(\.members)
        for type in types {
            list += subscribers[type] ?? []
            list += (groupSubscribers[type] ?? []).flatMap(\.members)
        }
        return list.filter(\.acceptsDeliveries)
    }

    /// `process` has frames to write at the end of the turn.
    package func markDirty(_ process: SupervisedProcess) {
        guard !process.dirty else { return }
        process.dirty = true
        dirty.append(process)
    }

    /// Calls `write` for every process marked dirty since the last flush, once each.
    package func flushDirty(_ write: (SupervisedProcess) -> Void) {
        guard !dirty.isEmpty else { return }
        let batch = dirty
        dirty.removeAll(keepingCapacity: true)
        for process in batch {
            process.dirty = false
            write(process)
        }
    }
}
