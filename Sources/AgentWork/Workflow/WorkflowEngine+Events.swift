import Foundation
import JSONSchema

/// Events into the engine: the types it wants, `wait_event` steps released through the
/// ``WaitIndex``, and runs started by `on_event`.
extension WorkflowEngine {
    package func refreshWantedTypes() {
        let types = Set(waits.types).union(triggers.keys)
        guard types != wantedTypes else { return }
        wantedTypes = types
        wantedTypesChanged()
    }

    /// Whether `condition` passes `payload`; one it cannot decide is reported and does not.
    private func decides(_ condition: JSONSchemaValidator, _ payload: JSONValue, _ owner: String, _ type: String, _ source: String) -> Bool {
        switch ConditionOutcome(condition, on: payload) {
        case .passes: return true
        case .fails: return false
        case .undecided(let error):
            undecidedConditions.report(owner, eventType: type, source: source, error)
            return false
        }
    }

    package func removeWait(run: String, step: String) {
        if waits.remove(run: run, step: step) != nil { refreshWantedTypes() }
    }

    /// Makes the engine want `type` and routes its events to the step from now on: at its start,
    /// before the start is committed, so an event in that gap is held for the step (which goes on
    /// only once its start is committed, at its launch). `condition`: the resolved `where`.
    package func armWait(_ state: LiveRun, _ step: String, type: String, condition: JSONValue?) {
        var validator: JSONSchemaValidator?
        if let condition {
            // Checked when the settings were read and when the step started: this is a store edited by hand.
            guard let compiled = try? JSONSchemaValidator(schema: condition) else {
                return logger.error("workflow run \(state.run.id): the \"where\" of step \(step) does not compile; the step waits until its timeout")
            }
            validator = compiled
        }
        if waits.add(WaitIndex.Wait(run: state.run.id, step: step, condition: validator), type: type, where: condition) { refreshWantedTypes() }
    }

    /// An event of a type in ``wantedTypes``: waiting steps whose condition it passes go on (a
    /// step whose start is not committed yet keeps the first such event until its launch),
    /// workflows triggered by it start.
    /// `cascade`: how many runs, each started by an event of the one before, led to this event
    /// (0: an event of a process, a person, a schedule).
    /// `payloadBytes`: the payload's JSON text's length, when the caller has it (else measured
    /// for a trigger).
    ///
    /// A turn of the loop hands out events for at most ``handOutSlice``: an event that many
    /// runs wait for (10,000 runs: 170 ms) goes on at the next turns, and the events after it
    /// wait for it, so that every run sees the events in the order they came.
    package func eventArrived(type: String, source: String, time: Double, payload: JSONValue, cascade: Int = 0, payloadBytes: Int? = nil) {
        guard !stopping else { return }
        arrivals.append(EventArrival(type: type, source: source, time: time, payload: payload, cascade: cascade, payloadBytes: payloadBytes))
        if arrivals.count == 1 { handOutArrivals() }
    }

    /// The longest a turn of the loop hands out events before it leaves the rest to the next.
    nonisolated static let handOutSlice = 0.004

    /// An event not yet handed to all the steps that wait for it.
    struct EventArrival {
        var type: String
        var source: String
        var time: Double
        var payload: JSONValue
        var cascade: Int
        var payloadBytes: Int?
        /// The steps that waited for it when it came (nil: not looked up yet), and how many
        /// of them it was handed to.
        var waits: [WaitIndex.Wait]?
        var handed = 0

        var event: JSONValue {
            ["type": .string(type), "source": .string(source), "time": .string(TaskRun.iso(time)), "payload": payload]
        }
    }

    /// Hands out the events that came, oldest first, until the turn has taken ``handOutSlice``;
    /// the rest at the next turn.
    func handOutArrivals() {
        // Those handed out stay until the end (removed at once): an event published meanwhile
        // is appended behind them, and does not begin a hand-out of its own.
        var done = 0
        while done < arrivals.count, !stopping {
            // A copy: what it hands out may publish events, which are appended meanwhile.
            var arrival = arrivals[done]
            if !handOut(&arrival) {
                arrivals[done] = arrival
                arrivals.removeFirst(done)
                loop.schedule(after: 0) { [weak self] in self?.handOutArrivals() }
                return
            }
            done += 1
        }
        arrivals.removeAll()
    }

    /// Hands `arrival` to its waiting steps, then to its triggers; false when the turn's slice
    /// ran out first (it goes on from where it stopped).
    private func handOut(_ arrival: inout EventArrival) -> Bool {
        let type = arrival.type, source = arrival.source, payload = arrival.payload
        if arrival.waits == nil { arrival.waits = waits.candidates(type: type, payload: payload) }
        let candidates = arrival.waits ?? []
        let event = arrival.event
        while arrival.handed < candidates.count {
            if arrival.handed > 0, arrival.handed % 32 == 0, loop.turnHasTaken(Self.handOutSlice) { return false }
            let wait = candidates[arrival.handed]
            arrival.handed += 1
            // A step that stopped waiting since the event came (its timeout, a cancel) takes nothing.
            guard waits.contains(run: wait.run, step: wait.step) else { continue }
            if let condition = wait.condition, !decides(condition, payload, "the \"where\" of step \(wait.step) of workflow run \(wait.run)", type, source) { continue }
            guard let state = live[wait.run] else { continue }
            if state.launched.contains(wait.step) {
                finishStep(state, wait.step, .succeeded, output: event)
            } else if state.heldEvents[wait.step] == nil {
                state.heldEvents[wait.step] = event
            }
        }
        startTriggered(by: arrival, event: event)
        return true
    }

    /// Starts the workflows `arrival` triggers.
    private func startTriggered(by arrival: EventArrival, event: JSONValue) {
        let type = arrival.type, source = arrival.source, payload = arrival.payload
        // A run's input is the whole event: its type, source and time count with the payload.
        var envelope: Int?
        for trigger in triggers[type] ?? [] {
            // A workflow's own published events do not start it again (no endless chain).
            if source == "workflow:" + trigger.workflow { continue }
            if let condition = trigger.condition, !decides(condition, payload, "the \"where\" of workflow \(trigger.workflow)'s on_event", type, source) { continue }
            guard let definition = definitions[trigger.workflow] else { continue }
            let bytes = arrival.payloadBytes ?? payload.serializedLength(atMost: InputSize.largest) ?? InputSize.largest + 1
            if let problem = InputSize.eventProblem(type: type, source: source, payloadBytes: bytes) {
                logger.warning("workflows: event \(type) from \(source) starts no run of workflow \(trigger.workflow): \(problem)")
                continue
            }
            guard inputProblems(event, workflow: trigger.workflow).isEmpty else {
                logger.warning("workflows: event \(type) from \(source) does not match the input schema of workflow \(trigger.workflow); no run")
                continue
            }
            guard arrival.cascade < Self.deepestCascade else {
                stopCascade(type: type, source: source, workflow: trigger.workflow, cascade: arrival.cascade)
                continue
            }
            if envelope == nil {
                let empty: JSONValue = ["type": .string(type), "source": .string(source), "time": .string(TaskRun.iso(arrival.time)), "payload": .null]
                envelope = (empty.serializedLength(atMost: InputSize.largest) ?? 0) - "null".utf8.count
            }
            let inputBytes = bytes + (envelope ?? 0)
            if lacksInputRoom(inputBytes) {
                if let count = inputRefusals.add(trigger.workflow) {
                    logger.warning("workflows: event \(type) from \(source) starts no run of workflow \(trigger.workflow)\(LogCounts.times(count)): the unfinished workflow runs of this agent hold \(heldInputBytes >> 20) MiB of input already, at most \(heldInputLimit >> 20) MiB; runs of large events are left out until some have ended, or publish a reference to the data (a path, a URL) instead")
                }
                continue
            }
            start(definition, input: event, requestedBy: "event", cascade: arrival.cascade + 1, inputBytes: inputBytes)
        }
    }

    /// A chain of triggers at ``deepestCascade``: the event starts no run; said once, in the
    /// log and as an event (of the same depth, so that nothing it triggers goes on either).
    private func stopCascade(type: String, source: String, workflow: String, cascade: Int) {
        if let count = cascadeStops.add(workflow) {
            logger.error("workflows: trigger cascade stopped\(LogCounts.times(count)): the event \(type) from \(source) comes \(cascade) runs deep (each started by an event of the one before, at most \(Self.deepestCascade)); workflow \(workflow) is not started. A trigger cycle goes on without end: make its \"where\" end it, or break it")
        }
        publish(.workflowCascadeStopped, ["workflow": .string(workflow), "event_type": .string(type), "source": .string(source),
                                             "depth": .number(JSONNumber(cascade)), "limit": .number(JSONNumber(Self.deepestCascade))], cascade)
    }
}
