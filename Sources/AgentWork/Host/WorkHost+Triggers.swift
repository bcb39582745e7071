import AgentSupervision
import Foundation
import JSONSchema

/// The work layer's events and the triggers they (and every routed event) fire: a task's
/// `on_event`, and the events workflows wait for.
extension WorkHost {
    /// An event of the work layer from `source` (`tasks`, `schedules`, `workflows`,
    /// `workflow:NAME`): shown, stored, published, delivered to its subscribers, able to
    /// trigger tasks, and handed to the fleet when it publishes the type. `cascade`: the depth of
    /// a run's event in its chain of triggers (see ``WorkflowEngine/deepestCascade``).
    package func publish(_ type: String, _ payload: JSONValue, source: String, cascade: Int = 0) {
        route(type, payload.serializedBytes(), source: source, time: Self.now(), cascade: cascade, stored: false)
    }

    /// The time now, in nanoseconds since the epoch (CLOCK_REALTIME, as workers stamp events).
    static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// Routes an event of the agent (its JSON text `body`) as a process's emit is routed:
    /// shown, stored (unless `stored`: committed already), to its subscribers, its triggers
    /// and the waiting workflows, and to the fleet when it publishes the type.
    /// `parsed`: the payload as a value, when the caller has it (not parsed again for triggers).
    func route(_ type: String, _ body: [UInt8], source: String, time now: Int64, cascade: Int, stored: Bool, parsed: JSONValue? = nil) {
        if stored {
            events.publishStored(type: type, source: source, payload: body, timeNanoseconds: now)
        } else {
            events.publish(type: type, source: source, payload: body, timeNanoseconds: now)
        }
        if let triggers = triggers[type] {
            body.withUnsafeBytes { fire(triggers, type: type, source: source, timeNanoseconds: now, payload: $0, cascade: cascade, parsed: parsed) }
        }
        if let fleetBridge, fleetBridge.published.contains(type) {
            body.withUnsafeBytes { fleetBridge.publish(type: type, source: source, timeNanoseconds: now, payload: $0) }
        }
    }

    /// An event the runtime declares (``RuntimeEvent``), its payload checked against the declaration.
    package func publish(_ event: RuntimeEvent, _ payload: JSONObject, source: String, cascade: Int = 0) {
        publish(event.type, event.payload(payload), source: source, cascade: cascade)
    }

    /// The triggers routing looks up: the tasks' and, for each event type the workflow engine
    /// wants, one entry for it (none when no workflow waits: routing is unchanged then).
    func refreshTriggers() {
        var triggers = ownTriggers
        for type in workflows?.wantedTypes ?? [] { triggers[type, default: []].append(TaskTrigger(task: "", condition: nil, workflows: true)) }
        if triggers.isEmpty != self.triggers.isEmpty || !triggers.isEmpty {
            self.triggers = triggers
            // Sources look their triggers up again with their targets.
            events.routingChanged()
        }
    }

    /// Runs the tasks triggered by an event whose payload passes their condition, with the
    /// event as input, and hands it to the workflows that wait for its type. `cascade`: the
    /// depth of a run's event in its chain of triggers (0 for any other event).
    package func fire(_ triggers: [TaskTrigger], type: String, source: String, timeNanoseconds: Int64, payload: UnsafeRawBufferPointer, cascade: Int = 0,
                      parsed: JSONValue? = nil) {
        guard let tasks, !host.isStopping else { return }
        let json = parsed ?? (try? JSONValue.parse(payload))
        let value = json ?? .string(String(decoding: payload, as: UTF8.self))
        for trigger in triggers {
            if trigger.workflows {
                workflows?.eventArrived(type: type, source: source, time: Double(timeNanoseconds) / 1e9, payload: value, cascade: cascade,
                                        payloadBytes: payload.count)
                continue
            }
            // A task's own events do not trigger it again (no endless chain).
            if source == "tasks", value["task"]?.stringValue == trigger.task { continue }
            if let condition = trigger.condition {
                switch ConditionOutcome(condition, on: value) {
                case .passes: break
                case .fails: continue
                case .undecided(let error):
                    tasks.undecidedConditions.report("the \"where\" of task \(trigger.task)'s on_event", eventType: type, source: source, error)
                    continue
                }
            }
            if let problem = InputSize.eventProblem(type: type, source: source, payloadBytes: payload.count) {
                if let count = inputRefusals.add("size of task " + trigger.task) {
                    logger.warning("tasks: event \(type) from \(source) starts no run of task \(trigger.task)\(LogCounts.times(count)): \(problem)")
                }
                continue
            }
            let time = TaskRun.iso(Double(timeNanoseconds) / 1e9)
            let input: JSONValue = ["type": .string(type), "source": .string(source), "time": .string(time), "payload": value]
            if let problem = tasks.inputProblems(input, task: trigger.task).first {
                logger.warning("tasks: event \(type) from \(source) is no valid input of task \(trigger.task) (\(problem.pointer): \(problem.message)); no run")
                continue
            }
            guard cascade < WorkflowEngine.deepestCascade else {
                stopCascade(type: type, source: source, task: trigger.task, cascade: cascade)
                continue
            }
            var run = tasks.prepare(task: trigger.task, input: input, priority: .normal, requestedBy: .event, cascade: cascade + 1)
            if json != nil, payload.count >= RunInput.textOnlyFrom {
                // Held as its text alone, as a request's large input is (the value is ~13 × the
                // text): the payload's own bytes when they are one line (a command reads its
                // input as one), else the value written again.
                let oneLine = payload.baseAddress.map { memchr($0, 10, payload.count) == nil && memchr($0, 13, payload.count) == nil } ?? true
                run.inputText = InputText(oneLine ? Self.eventInputText(type: type, source: source, time: time, payload: payload)
                                                  : input.serializedBytes())
            }
            if tasks.shared == nil, tasks.lacksInputRoom(for: run) {
                if let count = inputRefusals.add("task " + trigger.task) {
                    let held = "the unfinished runs of this agent hold \(tasks.heldInputBytes >> 20) MiB of input already, at most \(tasks.heldInputLimit >> 20) MiB"
                    let todo = "runs of large events are left out until some have ended (`agent-control task runs --status queued`), or publish a reference to the data (a path, a URL) instead"
                    logger.warning("tasks: event \(type) from \(source) starts no run of task \(trigger.task)\(LogCounts.times(count)): \(held); \(todo)")
                }
                continue
            }
            tasks.submit(run)
        }
    }

    /// The input of a run `payload`'s event starts, as its text: the payload's own bytes (they
    /// parse) spliced in, not the value written again (a MiB takes the loop ~15 ms).
    static func eventInputText(type: String, source: String, time: String, payload: UnsafeRawBufferPointer) -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity(payload.count + type.utf8.count + source.utf8.count + 64)
        for (key, field) in [("type", type), ("source", source), ("time", time)] {
            text.append(contentsOf: (text.isEmpty ? "{\"" : ",\"").utf8)
            text.append(contentsOf: (key + "\":").utf8)
            text.append(contentsOf: JSONValue.string(field).serializedBytes())
        }
        text.append(contentsOf: #","payload":"#.utf8)
        text.append(contentsOf: payload)
        text.append(UInt8(ascii: "}"))
        return text
    }

    /// A chain of triggers at ``WorkflowEngine/deepestCascade``: the event starts no run of
    /// `task`; said once, in the log and as a `task.cascade_stopped` event of the same depth.
    private func stopCascade(type: String, source: String, task: String, cascade: Int) {
        if let count = cascadeStops.add("task " + task) {
            logger.error("tasks: trigger cascade stopped\(LogCounts.times(count)): the event \(type) from \(source) comes \(cascade) runs deep (each started by an event of the one before, at most \(WorkflowEngine.deepestCascade)); task \(task) is not run. A trigger cycle goes on without end: make its \"where\" end it, or break it")
        }
        publish(.taskCascadeStopped, ["task": .string(task), "event_type": .string(type), "source": .string(source),
                                         "depth": .number(JSONNumber(cascade)), "limit": .number(JSONNumber(WorkflowEngine.deepestCascade))],
                source: "tasks", cascade: cascade)
    }
}
