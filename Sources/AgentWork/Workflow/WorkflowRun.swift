import Foundation
import JSONSchema

/// One run of a workflow: its input, variables, where it stands, and the definition version it
/// started with (a copy, so that a reload changes only new runs). Its steps are
/// ``WorkflowStepRecord``s, the step log.
package struct WorkflowRun: Sendable, Equatable {
    package enum Status: String, Sendable, CaseIterable {
        /// A step is going (a task, a chat, a publish).
        case running
        /// Every going step waits for an event or a person.
        case waiting
        case succeeded, failed, cancelled

        package var isFinished: Bool { self == .succeeded || self == .failed || self == .cancelled }
    }

    package var id: String
    package var workflow: String
    /// The definition's hash, and the definition itself as written.
    package var version: String
    package var definition: JSONValue
    package var input: JSONValue
    package var variables: JSONObject = [:]
    package var status: Status = .running
    package var error: String?
    package var output: JSONValue?
    /// `cli`, `http`, `event`, `schedule`.
    package var requestedBy: String
    package var startedAt: Double
    package var endedAt: Double?
    /// Bumped by a `goto`: the step log's records of earlier generations are history.
    package var generation = 1
    /// The top-level step the current generation starts at (a goto's target).
    package var resumeAt = 0
    /// How many runs, each started by an event of the one before, led to this one (0: not
    /// started by a run's event); its events carry it, see ``WorkflowEngine/deepestCascade``.
    package var cascade = 0
    /// The claim this agent holds it under (a fleet's shared store; not stored in the record).
    package var claim: RunClaim?
    /// Signals sent to it that no `wait_signal` step has taken yet, oldest first.
    package var signals: [WorkflowSignal] = []
    /// The agent carrying it out: a fleet agent's id (the last to take it over), else the
    /// agent's name. Nil in a record written before it was kept.
    package var agent: String?
    /// One more each time the engine hands the run's record to the store: which of two records
    /// of a run is the later (the store's run journal writes a kept change only over an
    /// earlier one). 0 in a record written before it was kept.
    package var revision = 0

    package init(id: String, workflow: WorkflowDefinition, input: JSONValue, requestedBy: String, startedAt: Double = Date().timeIntervalSince1970) {
        self.id = id
        self.workflow = workflow.name
        version = workflow.version
        definition = workflow.source
        self.input = input
        self.requestedBy = requestedBy
        self.startedAt = startedAt
    }

    /// As the commands show it.
    package var json: JSONValue {
        var object: JSONObject = [
            "id": .string(id), "workflow": .string(workflow), "version": .string(version), "status": .string(status.rawValue),
            "input": input, "variables": .object(variables), "requested_by": .string(requestedBy),
            "started_at": .string(TaskRun.iso(startedAt)),
        ]
        if let error { object["error"] = .string(error) }
        if let output { object["output"] = output }
        if !signals.isEmpty { object["signals"] = .array(signals.map(\.output)) }
        if let endedAt {
            object["ended_at"] = .string(TaskRun.iso(endedAt))
            object["duration"] = .number(JSONNumber(((endedAt - startedAt) * 1e6).rounded() / 1e6))
        }
        if let agent { object["agent"] = .string(agent) }
        return .object(object)
    }

    /// As the store keeps it (times as numbers).
    package var storedJSON: JSONValue {
        var object: JSONObject = [
            "id": .string(id), "workflow": .string(workflow), "version": .string(version), "definition": definition,
            "status": .string(status.rawValue), "input": input, "variables": .object(variables), "requested_by": .string(requestedBy),
            "started_at": .number(JSONNumber(startedAt)), "generation": .number(JSONNumber(generation)), "resume_at": .number(JSONNumber(resumeAt)),
        ]
        if let error { object["error"] = .string(error) }
        if let output { object["output"] = output }
        if let endedAt { object["ended_at"] = .number(JSONNumber(endedAt)) }
        if cascade > 0 { object["cascade"] = .number(JSONNumber(cascade)) }
        if !signals.isEmpty { object["signals"] = .array(signals.map(\.storedJSON)) }
        if let agent { object["agent"] = .string(agent) }
        if revision > 0 { object["revision"] = .number(JSONNumber(revision)) }
        return .object(object)
    }

    /// A run read for a list, whose definition a store may have left out (no list shows it).
    package init?(listed value: JSONValue) {
        guard case .object(var object) = value else { return nil }
        if object["definition"] == nil { object["definition"] = .null }
        self.init(stored: .object(object))
    }

    package init?(stored value: JSONValue) {
        guard let id = value["id"]?.stringValue, let workflow = value["workflow"]?.stringValue, let version = value["version"]?.stringValue,
              let definition = value["definition"], let status = value["status"]?.stringValue.flatMap(Status.init(rawValue:)),
              let startedAt = value["started_at"]?.numberValue?.doubleValue else { return nil }
        self.id = id
        self.workflow = workflow
        self.version = version
        self.definition = definition
        self.status = status
        input = value["input"] ?? .object([:])
        variables = value["variables"]?.objectValue ?? [:]
        requestedBy = value["requested_by"]?.stringValue ?? "cli"
        self.startedAt = startedAt
        endedAt = value["ended_at"]?.numberValue?.doubleValue
        error = value["error"]?.stringValue
        output = value["output"]
        generation = value["generation"]?.numberValue?.intValue ?? 1
        resumeAt = value["resume_at"]?.numberValue?.intValue ?? 0
        cascade = value["cascade"]?.numberValue?.intValue ?? 0
        signals = (value["signals"]?.arrayValue ?? []).compactMap(WorkflowSignal.init(stored:))
        agent = value["agent"]?.stringValue
        revision = value["revision"]?.numberValue?.intValue ?? 0
    }
}

/// One line of a run's step log: a step's start and, once it ended, its result.
package struct WorkflowStepRecord: Sendable, Equatable {
    package enum Status: String, Sendable, CaseIterable {
        case running, waiting, succeeded, failed, cancelled
        case timedOut = "timed_out"

        package var isFinished: Bool { self != .running && self != .waiting }
    }

    package var runID: String
    package var stepID: String
    package var kind: String
    /// The run's generation when the step started (see ``WorkflowRun/generation``).
    package var generation: Int
    /// 1, then one more per step retry or goto revisit: part of the idempotency key.
    package var attempt: Int
    package var status: Status
    package var startedAt: Double
    package var endedAt: Double?
    package var output: JSONValue?
    package var error: String?
    /// A task step's current task run.
    package var taskRun: String?
    /// When a wait, an approval or a task step's timeout ends it (seconds since the epoch).
    package var deadline: Double?
    /// Kind-specific: a condition's branch, an approval's approvers, prompt and decision, a wait's type.
    package var detail: JSONObject = [:]

    /// The key a task step's run gets: the same when the step runs again after a crash.
    package var idempotencyKey: String { "\(runID)/\(stepID)/\(attempt)" }

    package var json: JSONValue {
        var object: JSONObject = [
            "step": .string(stepID), "kind": .string(kind), "status": .string(status.rawValue), "attempt": .number(JSONNumber(attempt)),
            "generation": .number(JSONNumber(generation)), "started_at": .string(TaskRun.iso(startedAt)),
        ]
        if let endedAt {
            object["ended_at"] = .string(TaskRun.iso(endedAt))
            object["duration"] = .number(JSONNumber(((endedAt - startedAt) * 1e6).rounded() / 1e6))
        }
        if let output { object["output"] = output }
        if let error { object["error"] = .string(error) }
        if let taskRun {
            object["task_run"] = .string(taskRun)
            object["idempotency_key"] = .string(idempotencyKey)
        }
        if let deadline { object["deadline"] = .string(TaskRun.iso(deadline)) }
        // The detail keeps its times as numbers (`retry_at`), as the store does; an answer's are RFC 3339.
        for (key, value) in detail { object[key] = key.hasSuffix("_at") ? value.numberValue.map { .string(TaskRun.iso($0.doubleValue)) } ?? value : value }
        return .object(object)
    }

    package var storedJSON: JSONValue {
        var object: JSONObject = [
            "run": .string(runID), "step": .string(stepID), "kind": .string(kind), "generation": .number(JSONNumber(generation)),
            "attempt": .number(JSONNumber(attempt)), "status": .string(status.rawValue), "started_at": .number(JSONNumber(startedAt)),
            "detail": .object(detail),
        ]
        if let endedAt { object["ended_at"] = .number(JSONNumber(endedAt)) }
        if let output { object["output"] = output }
        if let error { object["error"] = .string(error) }
        if let taskRun { object["task_run"] = .string(taskRun) }
        if let deadline { object["deadline"] = .number(JSONNumber(deadline)) }
        return .object(object)
    }

    package init(runID: String, stepID: String, kind: String, generation: Int, attempt: Int, status: Status, startedAt: Double = Date().timeIntervalSince1970) {
        self.runID = runID
        self.stepID = stepID
        self.kind = kind
        self.generation = generation
        self.attempt = attempt
        self.status = status
        self.startedAt = startedAt
    }

    package init?(stored value: JSONValue) {
        guard let runID = value["run"]?.stringValue, let stepID = value["step"]?.stringValue, let kind = value["kind"]?.stringValue,
              let status = value["status"]?.stringValue.flatMap(Status.init(rawValue:)),
              let startedAt = value["started_at"]?.numberValue?.doubleValue else { return nil }
        self.init(runID: runID, stepID: stepID, kind: kind, generation: value["generation"]?.numberValue?.intValue ?? 1,
                  attempt: value["attempt"]?.numberValue?.intValue ?? 1, status: status, startedAt: startedAt)
        endedAt = value["ended_at"]?.numberValue?.doubleValue
        output = value["output"]
        error = value["error"]?.stringValue
        taskRun = value["task_run"]?.stringValue
        deadline = value["deadline"]?.numberValue?.doubleValue
        detail = value["detail"]?.objectValue ?? [:]
    }
}
